import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHAT_MODEL, type ChatHarness, startChatHarness, UPSTREAM_TYPES, type UpstreamType } from "./harness.js";

/** Posts a body with the token and returns the status, the count header and the JSON. */
async function post(f: ChatHarness, path: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(`${f.gw.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, counted: res.headers.get("x-gateway-token-count"), json: (await res.json()) as any };
}

const COUNT_PATH: Record<UpstreamType, string | null> = {
  anthropic: "/v1/messages/count_tokens",
  gemini: "/v1beta/models/sim-chat:countTokens",
  "openai-chat": null,
};

for (const type of UPSTREAM_TYPES as readonly UpstreamType[]) {
  describe(`count_tokens over a ${type} channel`, () => {
    let f: ChatHarness;
    beforeAll(async () => {
      f = await startChatHarness("sqlite", type);
    });
    afterAll(async () => {
      await f?.close();
    });
    const count = (content: string, system?: string) =>
      post(
        f,
        "/v1/messages/count_tokens",
        { model: CHAT_MODEL, ...(system ? { system } : {}), messages: [{ role: "user", content }] },
        { "x-api-key": f.user.key },
      );
    const upstreamCounts = () => f.sim.received.filter((r) => r.path === COUNT_PATH[type]);

    it(
      COUNT_PATH[type]
        ? "answers the upstream's count, the input a call of the same body reports, free"
        : "answers the gateway's estimate, said so, since the vendor has no count endpoint",
      async () => {
        const before = await f.gw.balance(f.user.userId);
        const asked = upstreamCounts().length;
        const content = "Count the words of this longer sentence, please, and then some more of them.";
        const system = "You are terse.";
        const counted = await count(content, system);
        expect(counted.status).toBe(200);
        expect(await f.gw.balance(f.user.userId)).toBe(before);
        if (!COUNT_PATH[type]) {
          expect(counted.counted).toBe("estimated");
          expect(f.sim.received.some((r) => r.path.includes("count"))).toBe(false);
          return;
        }
        expect(counted.counted).toBe("upstream");
        expect(upstreamCounts().length).toBe(asked + 1);
        // The channel's key went with it, and the model by the channel's mapping.
        const sent = upstreamCounts().at(-1);
        expect(JSON.stringify(sent?.body)).toContain("sim-chat");
        const call = await post(
          f,
          "/v1/messages",
          { model: CHAT_MODEL, max_tokens: 50, system, messages: [{ role: "user", content }] },
          { "x-api-key": f.user.key },
        );
        expect(call.status).toBe(200);
        const reported = call.json.usage.input_tokens + (call.json.usage.cache_read_input_tokens ?? 0);
        expect(counted.json.input_tokens).toBe(reported);
      },
    );

    it.skipIf(!COUNT_PATH[type])(
      "falls back to the gateway's estimate when the upstream's count fails, and says so",
      async () => {
        const asked = upstreamCounts().length;
        const counted = await count("[500] this count fails upstream");
        expect(counted.status).toBe(200);
        expect(counted.counted).toBe("estimated");
        expect(counted.json.input_tokens).toBe(Math.ceil("[500] this count fails upstream".length / 4));
        expect(upstreamCounts().length).toBe(asked + 1);
      },
    );
  });
}

describe(":countTokens over a gemini channel", () => {
  let f: ChatHarness;
  beforeAll(async () => {
    f = await startChatHarness("sqlite", "gemini");
  });
  afterAll(async () => {
    await f?.close();
  });
  const countPath = `/v1beta/models/${CHAT_MODEL}:countTokens`;
  const upstreamCounts = () => f.sim.received.filter((r) => r.path.startsWith("/v1beta/models/sim-chat:countTokens"));

  it("answers the upstream's count of contents, the prompt tokens a call reports, free", async () => {
    const before = await f.gw.balance(f.user.userId);
    const contents = [{ role: "user", parts: [{ text: "How many tokens are in this prompt of a few words?" }] }];
    const counted = await post(f, countPath, { contents }, { "x-goog-api-key": f.user.key });
    expect(counted.status).toBe(200);
    expect(counted.counted).toBe("upstream");
    expect(upstreamCounts()).toHaveLength(1);
    expect(upstreamCounts()[0]?.body).toEqual({ contents });
    expect(await f.gw.balance(f.user.userId)).toBe(before);
    const call = await post(
      f,
      `/v1beta/models/${CHAT_MODEL}:generateContent`,
      { contents },
      { "x-goog-api-key": f.user.key },
    );
    expect(call.status).toBe(200);
    expect(counted.json.totalTokens).toBe(call.json.usageMetadata.promptTokenCount);
  });

  it("sends a system instruction inside a generateContentRequest under the upstream's model name", async () => {
    const body = {
      contents: [{ role: "user", parts: [{ text: "Hello there" }] }],
      systemInstruction: { parts: [{ text: "Be brief in every answer you give." }] },
    };
    const counted = await post(f, countPath, body, { "x-goog-api-key": f.user.key });
    expect(counted.counted).toBe("upstream");
    expect((upstreamCounts().at(-1)?.body as any)?.generateContentRequest?.model).toBe("models/sim-chat");
    expect(counted.json.totalTokens).toBe(Math.ceil("Hello thereBe brief in every answer you give.".length / 4));
  });

  it("falls back to the gateway's estimate when the upstream's count fails, and says so", async () => {
    const asked = upstreamCounts().length;
    const contents = [{ role: "user", parts: [{ text: "[429] too many counts" }] }];
    const counted = await post(f, countPath, { contents }, { "x-goog-api-key": f.user.key });
    expect(counted.status).toBe(200);
    expect(counted.counted).toBe("estimated");
    expect(counted.json.totalTokens).toBe(Math.ceil("[429] too many counts".length / 4));
    expect(upstreamCounts().length).toBe(asked + 1);
  });

  it("refuses a model no channel lists, in Google's shape", async () => {
    const counted = await post(
      f,
      "/v1beta/models/nope:countTokens",
      { contents: [{ parts: [{ text: "hi" }] }] },
      { "x-goog-api-key": f.user.key },
    );
    expect(counted.status).toBe(404);
    expect(counted.json.error.status).toBe("NOT_FOUND");
  });
});
