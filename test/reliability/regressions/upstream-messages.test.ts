import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBase62 } from "../../../src/core/ids.js";
import { PRICE as CHAT_PRICE } from "../../chat/harness.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { waitForTask } from "../../tasks/harness.js";
import {
  encodedCopies,
  type FaultUpstream,
  jsonEscaped,
  percentEncoded,
  startFaultUpstream,
} from "../fault-upstream.js";
import { bearer, callGateway, googleKey, spendingRows } from "../harness.js";

/**
 * Upstream messages reach clients unfiltered on two surfaces:
 * - images: every upstream failure message carries the upstream's address
 *   (`core/images/generate-images.ts`, `imageUpstreamFailure`, passes `err.message`, which ends with
 *   `(<safeUrl>)`), unlike tasks and content (`publicUpstreamReason`);
 * - images and tasks: an upstream that repeats the channel's key in a refusal has it passed on
 *   (images: the 400 message; tasks: the submit error and the stored `fail_reason`), unlike content,
 *   which removes it (`upstreams/gemini/errors.ts`, `withoutKey`).
 */
describe("upstream messages shown to clients [sqlite]", () => {
  let gw: TestGateway;
  let up: FaultUpstream;
  beforeAll(async () => {
    up = await startFaultUpstream();
    gw = await startTestGateway("sqlite", { logLevel: "warn" });
    await gw.gateway.ctx.prices.setPrice({ kind: "content", name: "chat-model", ...CHAT_PRICE });
  });
  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });

  async function tenant(type: "openai-images" | "task-relay" | "generate-record", models: string[], baseUrl: string) {
    const group = `d${Math.random().toString(36).slice(2, 8)}`;
    const channelKey = `chan-secret-${Math.random().toString(36).slice(2, 12)}`;
    await gw.createChannel({ type, baseUrl, key: channelKey, models, groups: [group], settings: { timeoutMs: 1500 } });
    const user = await gw.createUser({ quota: 50_000_000, group });
    return { ...user, channelKey };
  }

  it("an image upstream failure does not show the upstream's address", async () => {
    const t = await tenant("openai-images", ["image-model"], up.baseUrl("connection-refused"));
    const answer = await callGateway(gw.url, "POST", "/v1/images/generations", {
      headers: bearer(t.key),
      body: { model: "image-model", prompt: "a boat" },
    });
    expect(answer.status).toBe(502);
    expect(answer.text).not.toContain("127.0.0.1");
  });

  it("an image upstream echoing the channel's key does not pass it on", async () => {
    const t = await tenant("openai-images", ["image-model"], up.baseUrl("echo-key"));
    const answer = await callGateway(gw.url, "POST", "/v1/images/generations", {
      headers: bearer(t.key),
      body: { model: "image-model", prompt: "a boat" },
    });
    expect(answer.status).toBe(400);
    expect(answer.text).not.toContain(t.channelKey);
  });

  it.each([
    ["audioa", "task-relay"],
    ["audiob", "generate-record"],
  ] as const)(
    "a %s upstream echoing the channel's key does not pass it on, in the answer or the record",
    async (family, type) => {
      const t = await tenant(type, [family], up.baseUrl("echo-key"));
      const answer = await callGateway(gw.url, "POST", `/${family}/submit/MUSIC`, {
        headers: bearer(t.key),
        body: { prompt: "a song" },
      });
      // The submit answers the id; the refusal shows on the task, which ends refunded.
      expect(answer.status).toBe(200);
      expect(answer.text).not.toContain(t.channelKey);
      const taskId = JSON.parse(answer.text).data as string;
      const ended = await waitForTask(gw.url, t.key, family, taskId);
      expect(ended.status).toBe("FAILURE");
      expect(JSON.stringify(ended)).not.toContain(t.channelKey);
      const refunded = await spendingRows(gw, t.userId);
      expect(refunded.map((r) => r.kind).sort()).toEqual(["charge", "refund"]);
      const rows = await gw.gateway.ctx.store.db.selectFrom("tasks").select(["fail_reason"]).execute();
      for (const r of rows) expect(r.fail_reason).not.toContain(t.channelKey);
    },
  );

  /** Neither the key nor any copy of it, nor a piece of it as long as half the key. */
  function expectNoCopy(text: string, key: string) {
    expect(text).not.toContain(key);
    for (const copy of encodedCopies(key)) {
      expect(text).not.toContain(copy);
      expect(text).not.toContain(copy.slice(2, 2 + Math.ceil(copy.length / 2)));
    }
  }

  it.each([
    ["content", "gemini", ["gemini-2.5-flash"]],
    ["images", "openai-images", ["image-model"]],
    ["audioa", "task-relay", ["audioa"]],
    ["audiob", "generate-record", ["audiob"]],
  ] as const)(
    "%s: a key echoed spaced, split or encoded reaches neither the client nor the log",
    async (surface, type, models) => {
      const group = `e${Math.random().toString(36).slice(2, 8)}`;
      const channelKey = `chan-secret-${Math.random().toString(36).slice(2, 12)}`;
      await gw.createChannel({
        type,
        baseUrl: up.baseUrl("echo-key-encoded"),
        key: channelKey,
        models: [...models],
        groups: [group],
      });
      const user = await gw.createUser({ quota: 50_000_000, group });
      const answer =
        surface === "content"
          ? await callGateway(gw.url, "POST", "/v1beta/models/gemini-2.5-flash:generateContent", {
              headers: googleKey(user.key),
              body: { contents: [{ role: "user", parts: [{ text: "hi" }] }] },
            })
          : surface === "images"
            ? await callGateway(gw.url, "POST", "/v1/images/generations", {
                headers: bearer(user.key),
                body: { model: "image-model", prompt: "a boat" },
              })
            : await callGateway(gw.url, "POST", `/${surface}/submit/MUSIC`, {
                headers: bearer(user.key),
                body: { prompt: "a song" },
              });
      // A task submit answers the id; the refusal (and its redacted reason) shows on the task.
      const shown =
        surface === "audioa" || surface === "audiob"
          ? JSON.stringify(await waitForTask(gw.url, user.key, surface, JSON.parse(answer.text).data))
          : answer.text;
      expect(answer.status).toBe(surface === "audioa" || surface === "audiob" ? 200 : 400);
      expect(shown).toContain("[redacted]");
      expectNoCopy(answer.text, channelKey);
      expectNoCopy(shown, channelKey);
      await gw.gateway.ctx.requestLogs.flush();
      expectNoCopy(gw.logs.join("\n"), channelKey);
      const reasons = await gw.gateway.ctx.store.db.selectFrom("tasks").select(["fail_reason"]).execute();
      expectNoCopy(reasons.map((r) => r.fail_reason).join("\n"), channelKey);
      const errors = await gw.gateway.ctx.store.db.selectFrom("request_logs").select(["error"]).execute();
      expectNoCopy(errors.map((r) => r.error ?? "").join("\n"), channelKey);
    },
  );

  /** The base64 characters that depend on `run`'s bytes alone, at each of the three alignments. */
  const base64Cores = (run: string) =>
    [0, 1, 2].flatMap((offset) => {
      const encoded = Buffer.concat([Buffer.alloc(offset), Buffer.from(run)]).toString("base64");
      const core = encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + run.length)) / 6));
      return [core, core.replace(/\+/g, "-").replace(/\//g, "_")];
    });

  /** No run of 8 characters of `key`, as it is or URL-encoded, JSON-escaped, in hex or base64; nor its masked tail. */
  function expectNoRun(text: string, key: string) {
    const lower = text.toLowerCase();
    for (let i = 0; i + 8 <= key.length; i++) {
      const run = key.slice(i, i + 8);
      expect(text).not.toContain(run);
      expect(lower).not.toContain(percentEncoded(run).toLowerCase());
      expect(lower).not.toContain(jsonEscaped(run).toLowerCase());
      expect(lower).not.toContain(Buffer.from(run).toString("hex"));
      for (const core of base64Cores(run)) expect(text).not.toContain(core);
    }
    expect(text).not.toContain(key.slice(-6));
  }

  it.each([
    ["content", "gemini", ["gemini-2.5-flash"]],
    ["images", "openai-images", ["image-model"]],
    ["chat", "openai-chat", ["chat-model"]],
    ["messages", "anthropic", ["chat-model"]],
    ["audioa", "task-relay", ["audioa"]],
    ["audiob", "generate-record", ["audiob"]],
  ] as const)(
    "%s: a key quoted masked, or 8 of its characters quoted alone or encoded, reaches neither the client nor the log",
    async (surface, type, models) => {
      const group = `f${Math.random().toString(36).slice(2, 8)}`;
      const channelKey = `sk-proj-${randomBase62(40)}`;
      await gw.createChannel({
        type,
        baseUrl: up.baseUrl("echo-key-fragments"),
        key: channelKey,
        models: [...models],
        groups: [group],
      });
      const user = await gw.createUser({ quota: 50_000_000, group });
      const chatBody = { model: "chat-model", max_tokens: 16, messages: [{ role: "user", content: "hi" }] };
      const answer =
        surface === "content"
          ? await callGateway(gw.url, "POST", "/v1beta/models/gemini-2.5-flash:generateContent", {
              headers: googleKey(user.key),
              body: { contents: [{ role: "user", parts: [{ text: "hi" }] }] },
            })
          : surface === "images"
            ? await callGateway(gw.url, "POST", "/v1/images/generations", {
                headers: bearer(user.key),
                body: { model: "image-model", prompt: "a boat" },
              })
            : surface === "chat"
              ? await callGateway(gw.url, "POST", "/v1/chat/completions", { headers: bearer(user.key), body: chatBody })
              : surface === "messages"
                ? await callGateway(gw.url, "POST", "/v1/messages", {
                    headers: { "x-api-key": user.key, "anthropic-version": "2023-06-01" },
                    body: chatBody,
                  })
                : await callGateway(gw.url, "POST", `/${surface}/submit/MUSIC`, {
                    headers: bearer(user.key),
                    body: { prompt: "a song" },
                  });
      const task = surface === "audioa" || surface === "audiob";
      const shown = task
        ? JSON.stringify(await waitForTask(gw.url, user.key, surface, JSON.parse(answer.text).data))
        : answer.text;
      expect(answer.status, answer.text).toBe(task ? 200 : 400);
      // The upstream's words are passed on, the key's pieces blanked.
      expect(shown).toContain("Incorrect API key provided");
      expect(shown).toContain("[redacted]");
      expectNoRun(shown, channelKey);
      await gw.gateway.ctx.requestLogs.flush();
      expectNoRun(gw.logs.join("\n"), channelKey);
      const reasons = await gw.gateway.ctx.store.db.selectFrom("tasks").select(["fail_reason"]).execute();
      expectNoRun(reasons.map((r) => r.fail_reason).join("\n"), channelKey);
      const errors = await gw.gateway.ctx.store.db.selectFrom("request_logs").select(["error"]).execute();
      expectNoRun(errors.map((r) => r.error ?? "").join("\n"), channelKey);
    },
  );
});
