import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHAT_MODEL, type ChatHarness, startChatHarness } from "../chat/harness.js";

async function post(f: ChatHarness, path: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(`${f.gw.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), json: (await res.json()) as any };
}

const chat = (f: ChatHarness, key: string, maxTokens = 20) =>
  post(
    f,
    "/v1/chat/completions",
    { model: CHAT_MODEL, max_tokens: maxTokens, messages: [{ role: "user", content: "Hello there" }] },
    { authorization: `Bearer ${key}` },
  );
const messages = (f: ChatHarness, key: string) =>
  post(
    f,
    "/v1/messages",
    { model: CHAT_MODEL, max_tokens: 20, messages: [{ role: "user", content: "Hello there" }] },
    { "x-api-key": key },
  );
const content = (f: ChatHarness, key: string) =>
  post(
    f,
    `/v1beta/models/${CHAT_MODEL}:generateContent`,
    { contents: [{ role: "user", parts: [{ text: "Hello there" }] }], generationConfig: { maxOutputTokens: 20 } },
    { "x-goog-api-key": key },
  );

describe("rate limits set by operators, on every metered surface", () => {
  let f: ChatHarness;
  beforeAll(async () => {
    // A gemini channel serves the chat surfaces and the Gemini-native one.
    f = await startChatHarness("sqlite", "gemini");
  });
  afterAll(async () => {
    await f?.close();
  });

  it("refuses a limit that names no subject, naming the field", async () => {
    const res = await f.gw.admin("PUT", "/rate-limits", { scope: "token", requestsPerMinute: 5 });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain("subject");
    const bad = await f.gw.admin("PUT", "/rate-limits", {
      scope: "user",
      subject: "1",
      requestsPerMinute: 0,
    });
    expect(bad.status).toBe(400);
  });

  it("answers a user past its requests per minute with a 429 in each surface's shape and Retry-After", async () => {
    const user = await f.gw.createUser({ quota: 50_000_000 });
    const set = await f.gw.admin("PUT", "/rate-limits", {
      scope: "user",
      subject: String(user.userId),
      requestsPerMinute: 1,
    });
    expect(set.status).toBe(200);
    expect(set.body.data).toMatchObject({ scope: "user", requestsPerMinute: 1, tokensPerMinute: null });
    expect((await chat(f, user.key)).status).toBe(200);
    const balance = await f.gw.balance(user.userId);

    const openai = await chat(f, user.key);
    expect(openai.status).toBe(429);
    expect(Number(openai.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(openai.retryAfter)).toBeLessThanOrEqual(60);
    expect(openai.json.error.message).toContain("requests per minute for this user");
    expect(openai.json.error.type).toBeTypeOf("string");

    const anthropic = await messages(f, user.key);
    expect(anthropic.status).toBe(429);
    expect(anthropic.retryAfter).not.toBeNull();
    expect(anthropic.json).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });

    const gemini = await content(f, user.key);
    expect(gemini.status).toBe(429);
    expect(gemini.retryAfter).not.toBeNull();
    expect(gemini.json.error).toMatchObject({ code: 429, status: "RESOURCE_EXHAUSTED" });

    // A refused call holds nothing.
    expect(await f.gw.balance(user.userId)).toBe(balance);
    const removed = await f.gw.admin("DELETE", `/rate-limits?scope=user&subject=${user.userId}`);
    expect(removed.status).toBe(200);
    expect((await chat(f, user.key)).status).toBe(200);
  });

  it("counts tokens per minute from settled usage, the worst case held only while the call runs", async () => {
    const user = await f.gw.createUser({ quota: 50_000_000 });
    await f.gw.admin("PUT", "/rate-limits", {
      scope: "user",
      subject: String(user.userId),
      tokensPerMinute: 2500,
    });
    // Each call may use about 1,500 tokens, and uses far fewer: the second passes only because the
    // first kept what it used, not its worst case.
    expect((await chat(f, user.key, 1500)).status).toBe(200);
    expect((await chat(f, user.key, 1500)).status).toBe(200);
    const listed = await f.gw.admin("GET", "/rate-limits");
    expect(listed.body.data).toContainEqual({
      scope: "user",
      subject: String(user.userId),
      group: "",
      requestsPerMinute: null,
      tokensPerMinute: 2500,
    });
  });

  it("applies a group's default and a model's limit per user", async () => {
    const a = await f.gw.createUser({ quota: 50_000_000 });
    const b = await f.gw.createUser({ quota: 50_000_000 });
    const group = (await f.gw.gateway.ctx.users.get(a.userId))?.group as string;
    await f.gw.admin("PUT", "/rate-limits", { scope: "token", group, requestsPerMinute: 1 });
    expect((await chat(f, a.key)).status).toBe(200);
    expect((await chat(f, a.key)).status).toBe(429);
    expect((await chat(f, b.key)).status).toBe(200);
    expect((await f.gw.admin("DELETE", `/rate-limits?scope=token&group=${group}`)).status).toBe(200);
    const c = await f.gw.createUser({ quota: 50_000_000 });
    await f.gw.admin("PUT", "/rate-limits", { scope: "model", subject: CHAT_MODEL, requestsPerMinute: 1 });
    expect((await content(f, c.key)).status).toBe(200);
    const refused = await messages(f, c.key);
    expect(refused.status).toBe(429);
    expect(refused.json.error.message).toContain(`model "${CHAT_MODEL}" for this user`);
  });
});
