import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { FAST_TASKS, submit, waitForTask } from "./harness.js";

const LATENCY_MS = 120;

describe("one pool of slots per channel for task calls [sqlite]", () => {
  let gw: TestGateway;
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({
      seed: 3,
      keys: ["sim-key"],
      generateRecord: { completeAfterMs: 300, latencyMs: LATENCY_MS, callbacks: false },
    });
    gw = await startTestGateway("sqlite", FAST_TASKS);
    await gw.createChannel({
      type: "generate-record",
      baseUrl: sim.url,
      models: ["audiob"],
      settings: { concurrency: 1 },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await sim?.close();
  });

  it("never has more calls in flight than the channel's concurrency, sends and polls together", async () => {
    const user = await gw.createUser({ quota: 10_000_000 });
    const answers = await Promise.all(
      Array.from({ length: 4 }, (_, i) => submit(gw.url, user.key, "audiob", "MUSIC", { prompt: `song ${i}` })),
    );
    for (const a of answers) expect(a.status).toBe(200);
    for (const a of answers)
      expect((await waitForTask(gw.url, user.key, "audiob", a.body.data)).status).toBe("SUCCESS");
    const calls = sim.received
      .filter((r) => r.protocol === "generate-record")
      .map((r) => r.at)
      .sort((a, b) => a - b);
    expect(calls.length).toBeGreaterThan(4);
    // One slot: each call arrives only after the one before it was answered (it takes LATENCY_MS).
    const gaps = calls.slice(1).map((at, i) => at - (calls[i] as number));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(LATENCY_MS - 20);
  });
});
