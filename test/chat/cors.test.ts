import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { CHAT_MODEL, type ChatHarness, openAiClient, startChatHarness } from "./harness.js";

// Browser apps on the origins the operator lists may call the client API; nothing else is opened.

const APP = "https://app.example.com";

function preflight(url: string, origin: string, headers = "authorization, content-type, x-stainless-os") {
  return fetch(url, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": headers },
  });
}

describe("cross-origin access when origins are listed", () => {
  let f: ChatHarness;
  beforeAll(async () => {
    f = await startChatHarness("sqlite", "openai-chat", {}, { cors: { origins: [APP, "http://localhost:5173"] } });
  });
  afterAll(async () => {
    await f?.close();
  });

  it("answers a preflight of a listed origin with what the call needs, and no credentials", async () => {
    const res = await preflight(`${f.gw.url}/v1/chat/completions`, APP);
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(APP);
    expect(res.headers.get("access-control-allow-methods")).toContain("POST");
    expect(res.headers.get("access-control-allow-headers")).toBe("authorization, content-type, x-stainless-os");
    expect(res.headers.get("access-control-max-age")).toBe("600");
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    expect(res.headers.get("vary")).toContain("Origin");
  });

  it("lets the call from a listed origin read its answer and its headers", async () => {
    const client = openAiClient(f.gw, f.user.key);
    const answer = await client.chat.completions
      .create({ model: CHAT_MODEL, messages: [{ role: "user", content: "Hello" }] }, { headers: { origin: APP } })
      .withResponse();
    expect(answer.data.choices[0]?.message.content).toBeTruthy();
    expect(answer.response.headers.get("access-control-allow-origin")).toBe(APP);
    expect(answer.response.headers.get("access-control-expose-headers")).toContain("retry-after");
    expect(answer.response.headers.get("access-control-expose-headers")).toContain("x-request-id");
  });

  it("still asks for the token: a cross-origin call without one is a 401 the page can read", async () => {
    const res = await fetch(`${f.gw.url}/v1/models`, { headers: { origin: APP } });
    expect(res.status).toBe(401);
    expect(res.headers.get("access-control-allow-origin")).toBe(APP);
  });

  it("gives an origin that is not listed no CORS headers, so the browser refuses the call", async () => {
    const res = await preflight(`${f.gw.url}/v1/chat/completions`, "https://evil.example.com");
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    const call = await fetch(`${f.gw.url}/v1/models`, {
      headers: { origin: "https://evil.example.com", authorization: `Bearer ${f.user.key}` },
    });
    expect(call.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("never opens the admin API, the console or the ops routes, even to a listed origin", async () => {
    for (const path of ["/api/admin/users", "/console/api/session", "/metrics", "/healthz"]) {
      const res = await preflight(`${f.gw.url}${path}`, APP);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("access-control-allow-origin"), path).toBeNull();
    }
    const admin = await fetch(`${f.gw.url}/api/admin/users`, {
      headers: { origin: APP, authorization: `Bearer ${f.gw.adminKey}` },
    });
    expect(admin.status).toBe(200);
    expect(admin.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("cross-origin access by default", () => {
  let f: ChatHarness;
  beforeAll(async () => {
    f = await startChatHarness("sqlite", "openai-chat");
  });
  afterAll(async () => {
    await f?.close();
  });

  it("is off: a preflight is a 404 without CORS headers and calls carry none", async () => {
    const res = await preflight(`${f.gw.url}/v1/chat/completions`, APP);
    expect(res.status).toBe(404);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    const client = openAiClient(f.gw, f.user.key);
    const answer = await client.chat.completions
      .create({ model: CHAT_MODEL, messages: [{ role: "user", content: "Hello" }] }, { headers: { origin: APP } })
      .withResponse();
    expect(answer.response.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("the cors.origins setting", () => {
  it("reads CORS_ORIGINS as a comma-separated list, and * as any origin", () => {
    expect(loadConfig({ CORS_ORIGINS: ` ${APP}, http://localhost:5173 ` }).cors.origins).toEqual([
      APP,
      "http://localhost:5173",
    ]);
    expect(loadConfig({ CORS_ORIGINS: "*" }).cors.origins).toEqual(["*"]);
    expect(loadConfig({}).cors.origins).toEqual([]);
  });

  it("refuses what is not an origin, naming the setting", () => {
    for (const bad of [
      `${APP}/`,
      `${APP}/app`,
      "app.example.com",
      "ftp://files.example.com",
      "https://*.example.com",
    ]) {
      expect(() => loadConfig({ CORS_ORIGINS: bad }), bad).toThrow(/cors\.origins\[0\].*CORS_ORIGINS/);
    }
  });
});

describe("any origin", () => {
  let f: ChatHarness;
  beforeAll(async () => {
    f = await startChatHarness("sqlite", "openai-chat", {}, { cors: { origins: ["*"] } });
  });
  afterAll(async () => {
    await f?.close();
  });

  it("answers * to every origin on the client API, never with credentials", async () => {
    const res = await preflight(`${f.gw.url}/v1beta/models/chat-model:generateContent`, "https://anyone.example");
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    const task = await preflight(`${f.gw.url}/audioa/submit/MUSIC`, "https://anyone.example");
    expect(task.headers.get("access-control-allow-origin")).toBe("*");
  });
});
