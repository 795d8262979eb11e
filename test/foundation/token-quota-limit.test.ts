import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`a token over its quota limit [${kind}]`, () => {
    let gw: TestGateway;
    let sim: Simulator;
    beforeAll(async () => {
      sim = await startSimulator({ keys: ["sim-key"], taskRelay: { completeAfterMs: 60_000 } });
      gw = await startTestGateway(kind);
      await gw.createChannel({
        type: "gemini",
        baseUrl: sim.url,
        key: "sim-key",
        models: ["image-model", "gemini-2.5-flash"],
      });
      await gw.createChannel({ type: "task-relay", baseUrl: sim.url, key: "sim-key", models: ["audioa"] });
    });
    afterAll(async () => {
      await gw?.close();
      await sim?.close();
    });

    it("is refused with 403 token_quota_exceeded in each surface's shape, nothing charged, no upstream call", async () => {
      const { key, userId } = await gw.createUser({ quota: 100_000_000, token: { quotaLimit: 10 } });
      const upstreamCalls = sim.received.length;
      const image = await fetch(`${gw.url}/v1/images/generations`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "image-model", prompt: "a lighthouse" }),
      });
      expect(image.status).toBe(403);
      expect(((await image.json()) as any).error).toMatchObject({
        type: "permission_error",
        code: "token_quota_exceeded",
      });

      const task = await fetch(`${gw.url}/audioa/submit/MUSIC`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ gpt_description_prompt: "a song" }),
      });
      expect(task.status).toBe(403);
      expect(await task.json()).toMatchObject({ code: "token_quota_exceeded", data: null });

      const content = await fetch(`${gw.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
        method: "POST",
        headers: { "x-goog-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
      });
      expect(content.status).toBe(403);
      expect(((await content.json()) as any).error).toMatchObject({ code: 403, status: "PERMISSION_DENIED" });

      expect(await gw.balance(userId)).toBe(100_000_000);
      expect(sim.received.length).toBe(upstreamCalls);
    });
  });
}
