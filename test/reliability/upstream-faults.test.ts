import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChannelInput } from "../../src/core/channel.js";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { waitForTask } from "../tasks/harness.js";
import { ALL_FAULTS, type Fault, type FaultUpstream, startFaultUpstream } from "./fault-upstream.js";
import {
  type Answer,
  bearer,
  CONTENT_BODY,
  callGateway,
  googleKey,
  isAlive,
  ledgerFigures,
  spendingRows,
  waitFor,
} from "./harness.js";
import { errorProblem, type SurfaceName } from "./surface-shapes.js";

/** The calls that reach an upstream, each with the channel type behind it and its error shape. */
const CALLS = {
  "content-sync": { type: "gemini", models: ["gemini-2.5-flash"], shape: "google" },
  "content-stream": { type: "gemini", models: ["gemini-2.5-flash"], shape: "google" },
  image: { type: "openai-images", models: ["image-model"], shape: "openai" },
  "audioa-submit": { type: "task-relay", models: ["audioa"], shape: "envelope" },
  "audiob-submit": { type: "generate-record", models: ["audiob"], shape: "envelope" },
} as const satisfies Record<string, { type: ChannelInput["type"]; models: string[]; shape: SurfaceName }>;
type CallName = keyof typeof CALLS;
const CALL_NAMES = Object.keys(CALLS) as CallName[];

/** Every surface promises that the upstream's address never reaches the client. */
const HIDES_UPSTREAM_ADDRESS: readonly CallName[] = CALL_NAMES;

/** Short per-channel limits so timeouts end in well under a second or two. */
const FAST_CHANNEL = { firstByteTimeoutMs: 300, timeoutMs: 1500 };

interface Tenant {
  userId: number;
  key: string;
  channelId: number;
  channelKey: string;
  group: string;
}

function send(gw: TestGateway, call: CallName, key: string, prompt = "a calm song"): Promise<Answer> {
  switch (call) {
    case "content-sync":
      return callGateway(gw.url, "POST", "/v1beta/models/gemini-2.5-flash:generateContent", {
        headers: googleKey(key),
        body: { ...CONTENT_BODY, contents: [{ role: "user", parts: [{ text: prompt }] }] },
      });
    case "content-stream":
      return callGateway(gw.url, "POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", {
        headers: googleKey(key),
        body: { ...CONTENT_BODY, contents: [{ role: "user", parts: [{ text: prompt }] }] },
      });
    case "image":
      return callGateway(gw.url, "POST", "/v1/images/generations", {
        headers: bearer(key),
        body: { model: "image-model", prompt },
      });
    case "audioa-submit":
      return callGateway(gw.url, "POST", "/audioa/submit/MUSIC", { headers: bearer(key), body: { prompt } });
    case "audiob-submit":
      return callGateway(gw.url, "POST", "/audiob/submit/MUSIC", { headers: bearer(key), body: { prompt } });
  }
}

const TASK_FAMILY: Partial<Record<CallName, string>> = { "audioa-submit": "audioa", "audiob-submit": "audiob" };

/**
 * Whether a call failed as a fault at the upstream makes it fail: an error answer, or, for a task
 * submit (answered with the task's id before the task is sent), a task that ends as FAILURE. The
 * text is what the client sees of it: the answer, and the task's record.
 */
async function failure(gw: TestGateway, call: CallName, key: string, answer: Answer) {
  const family = TASK_FAMILY[call];
  if (!family) return { failed: answer.status === 429 || answer.status >= 500, text: answer.text };
  if (answer.status !== 200) return { failed: false, text: answer.text };
  const record = await waitForTask(gw.url, key, family, (answer.body as { data: string }).data);
  return { failed: record.status === "FAILURE", text: `${answer.text}\n${JSON.stringify(record)}` };
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`faults at the upstream [${kind}]`, () => {
    let gw: TestGateway;
    let up: FaultUpstream;
    let sim: Simulator;
    let tenants = 0;

    beforeAll(async () => {
      up = await startFaultUpstream();
      sim = await startSimulator({ seed: 11 });
      gw = await startTestGateway(kind, {
        logLevel: "info",
        routing: { disableAfterFailures: 3, disableMinUsers: 2, probeIntervalMs: 3_600_000 },
        tasks: { timeoutSeconds: 2, pollIntervalMs: 50, maxPollIntervalMs: 200, workerTickMs: 20 },
      });
    });
    afterAll(async () => {
      await gw?.close();
      await sim?.close();
      await up?.close();
    });

    /** A user alone in a group served by one channel of the call's type at `baseUrl`. */
    async function tenant(call: CallName, baseUrl: string): Promise<Tenant> {
      tenants += 1;
      const group = `g${tenants}`;
      const channelKey = `chan-secret-${tenants}-${Math.random().toString(36).slice(2, 12)}`;
      const spec = CALLS[call];
      const channelId = await gw.createChannel({
        name: `${call}-${tenants}`,
        type: spec.type,
        baseUrl,
        key: channelKey,
        models: [...spec.models],
        groups: [group],
        settings: FAST_CHANNEL,
      });
      const user = await gw.createUser({ quota: 50_000_000, group });
      return { userId: user.userId, key: user.key, channelId, channelKey, group };
    }

    /** Another user of the same group (so served by the same channel). */
    async function neighbour(t: Tenant): Promise<Tenant> {
      const user = await gw.createUser({ quota: 50_000_000, group: t.group });
      return { ...t, userId: user.userId, key: user.key };
    }

    async function channelDisabled(channelId: number, what: string) {
      await waitFor(
        async () => ((await gw.gateway.ctx.channels.get(channelId))?.status === "auto_disabled" ? true : undefined),
        5000,
        `channel of ${what} to be disabled`,
      );
    }

    async function expectNothingCharged(t: Tenant) {
      expect(await gw.balance(t.userId)).toBe(50_000_000);
      const rows = await spendingRows(gw, t.userId);
      expect(rows.reduce((sum, r) => sum + Number(r.amount), 0)).toBe(0);
      for (const charge of rows.filter((r) => r.kind === "charge")) {
        expect(rows.filter((r) => r.reference === charge.reference && r.kind === "refund")).toHaveLength(1);
      }
    }

    it.each(ALL_FAULTS)(
      "%s: every surface answers a clear error in its own shape and refunds in full",
      async (fault) => {
        const cases = await Promise.all(
          CALL_NAMES.map(async (call) => {
            const t = await tenant(call, up.baseUrl(fault));
            return { call, t, answer: await send(gw, call, t.key) };
          }),
        );
        for (const { call, t, answer } of cases) {
          const where = `${fault} on ${call}: ${answer.status} ${answer.text.slice(0, 300)}`;
          const seen = await failure(gw, call, t.key, answer);
          expect(seen.failed, where).toBe(true);
          if (!TASK_FAMILY[call]) expect(errorProblem(CALLS[call].shape, answer.status, answer.body), where).toBeNull();
          // The channel's key never reaches the client, nor (where documented) the upstream's address.
          expect(seen.text, where).not.toContain(t.channelKey);
          if (HIDES_UPSTREAM_ADDRESS.includes(call)) expect(seen.text, where).not.toContain("127.0.0.1");
          await expectNothingCharged(t);
        }
        expect(await isAlive(gw)).toBe(true);
      },
    );

    it("an upstream refusing the channel's key for two users disables that channel, on every surface", async () => {
      for (const call of ["content-sync", "content-stream", "image", "audioa-submit", "audiob-submit"] as const) {
        const t = await tenant(call, up.baseUrl("status-401"));
        const first = await send(gw, call, t.key);
        expect((await failure(gw, call, t.key, first)).failed, call).toBe(true);
        await waitFor(
          async () => ((await gw.gateway.ctx.channels.get(t.channelId))?.failureCount ?? 0) > 0 || undefined,
          5000,
          `the failure of ${call} to be counted`,
        );
        // One user's calls alone never switch a shared channel off.
        expect((await gw.gateway.ctx.channels.get(t.channelId))?.status, call).toBe("enabled");
        const other = await neighbour(t);
        expect((await failure(gw, call, other.key, await send(gw, call, other.key))).failed, call).toBe(true);
        await expectNothingCharged(other);
        // The outcome is recorded beside the answer, not before it: wait for it (bounded).
        await channelDisabled(t.channelId, call);
        // With its only channel disabled the user gets a clear 503, and is charged nothing.
        const next = await send(gw, call, t.key);
        expect(next.status, call).toBe(503);
        expect(errorProblem(CALLS[call].shape, next.status, next.body)).toBeNull();
        await expectNothingCharged(t);
      }
    });

    it("disables a channel after routing.disableAfterFailures failures for routing.disableMinUsers users", async () => {
      for (const call of CALL_NAMES) {
        const t = await tenant(call, up.baseUrl("status-503"));
        for (let i = 0; i < 4; i++) {
          expect((await failure(gw, call, t.key, await send(gw, call, t.key))).failed, call).toBe(true);
          // Wait until this failure is counted, so the next call meets the same channel.
          await waitFor(
            async () => ((await gw.gateway.ctx.channels.get(t.channelId))?.failureCount ?? 0) > i || undefined,
            5000,
            `failure ${i + 1} of ${call} to be counted`,
          );
        }
        // Four failures, all of one user: the channel stays on; a second user's failure turns it off.
        expect((await gw.gateway.ctx.channels.get(t.channelId))?.status, call).toBe("enabled");
        const other = await neighbour(t);
        expect((await failure(gw, call, other.key, await send(gw, call, other.key))).failed, call).toBe(true);
        await channelDisabled(t.channelId, call);
        await expectNothingCharged(t);
        await expectNothingCharged(other);
      }
    });

    it("a stream broken after its first event ends in a final error event and bills only what was produced", async () => {
      const stalled = await tenant("content-stream", up.baseUrl("stream-stall"));
      const cut = await tenant("content-stream", sim.url);
      for (const [t, prompt] of [
        [stalled, "stall"],
        [cut, "cut [cut] [chunks=4]"],
        [cut, "truncate [truncate] [chunks=4]"],
      ] as const) {
        const answer = await send(gw, "content-stream", t.key, prompt);
        expect(answer.status, prompt).toBe(200);
        expect(answer.contentType).toContain("text/event-stream");
        const events = answer.text
          .split(/\r\n\r\n/)
          .filter((block) => block.startsWith("data: "))
          .map((block) => JSON.parse(block.slice(6)));
        expect(events.length, prompt).toBeGreaterThanOrEqual(2);
        const last = events[events.length - 1];
        expect(errorProblem("google", last.error?.code, last), prompt).toBeNull();
        expect(answer.text).not.toContain("127.0.0.1");
      }
      // Something was produced each time: billed (settled), never refunded, and the balance adds up.
      for (const t of [stalled, cut]) {
        const rows = await spendingRows(gw, t.userId);
        expect(rows.some((r) => r.kind === "refund")).toBe(false);
        expect(rows.filter((r) => r.kind === "charge").length).toBe(rows.filter((r) => r.kind === "settle").length);
        expect(await gw.balance(t.userId)).toBeLessThan(50_000_000);
      }
      expect((await ledgerFigures(gw)).violations).toEqual([]);
    });

    it("content: an upstream echoing the channel's key in its refusal never passes the key on", async () => {
      for (const call of ["content-sync", "content-stream"] as const) {
        const t = await tenant(call, up.baseUrl("echo-key"));
        const answer = await send(gw, call, t.key);
        expect(answer.status, call).toBeGreaterThanOrEqual(400);
        expect(errorProblem(CALLS[call].shape, answer.status, answer.body), call).toBeNull();
        expect(answer.text, call).not.toContain(t.channelKey);
        await expectNothingCharged(t);
      }
    });

    it("every fault while polling ends the task as FAILURE at its timeout, refunded exactly once", async () => {
      const submitted: Array<{ fault: Fault; family: string; taskId: string; t: Tenant }> = [];
      for (const fault of ALL_FAULTS) {
        for (const family of ["audioa", "audiob"] as const) {
          const connectionFault = fault === "connection-refused" || fault === "connection-reset";
          // Connection faults cannot answer the submit: the channel is moved there after it.
          const t = await tenant(`${family}-submit`, up.baseUrl(connectionFault ? "status-500" : fault, "poll"));
          const answer = await send(gw, `${family}-submit`, t.key);
          expect(answer.status, `${fault} ${family}: ${answer.text}`).toBe(200);
          if (connectionFault) {
            const patched = await gw.admin("PATCH", `/channels/${t.channelId}`, { base_url: up.baseUrl(fault) });
            expect(patched.status).toBe(200);
          }
          submitted.push({ fault, family, taskId: answer.body.data, t });
        }
      }
      for (const s of submitted) {
        const record = await waitFor(
          async () => {
            const res = await callGateway(gw.url, "GET", `/${s.family}/fetch/${s.taskId}`, {
              headers: bearer(s.t.key),
            });
            return res.body?.data?.status === "SUCCESS" || res.body?.data?.status === "FAILURE"
              ? res.body.data
              : undefined;
          },
          30_000,
          `${s.fault} ${s.family} task to end`,
        );
        expect(record.status, `${s.fault} ${s.family}`).toBe("FAILURE");
        expect(record.fail_reason).toContain("did not finish within 2 seconds");
        expect(JSON.stringify(record)).not.toContain("127.0.0.1");
        expect(await gw.balance(s.t.userId)).toBe(50_000_000);
        const rows = await spendingRows(gw, s.t.userId);
        expect(rows.map((r) => r.kind).sort()).toEqual(["charge", "refund"]);
      }
      expect(await isAlive(gw)).toBe(true);
    });

    it("after every fault the ledger holds: one charge per task, refunds once and in full, balances add up", async () => {
      const figures = await ledgerFigures(gw, { requireTerminal: true });
      expect(figures.violations).toEqual([]);
      expect(figures.failed).toBeGreaterThan(0);
      // No line of the log reports a bug of the gateway itself.
      expect(gw.logs.filter((l) => l.includes('"unhandled error"'))).toEqual([]);
    });
  });
}
