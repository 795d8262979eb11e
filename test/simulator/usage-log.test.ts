import { afterEach, describe, expect, it } from "vitest";
import { type Simulator, startSimulator, type UsageRecord } from "../../src/simulator/server.js";

let sim: Simulator | null = null;
afterEach(async () => {
  await sim?.close();
  sim = null;
});

const KEY = { "x-goog-api-key": "k", "content-type": "application/json" };

async function usageLog(url: string): Promise<UsageRecord[]> {
  const res = await fetch(`${url}/simulator/usage`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { records: UsageRecord[] }).records;
}

describe("the simulator's usage record", () => {
  it("keeps, per answered request, the usage it reported, the images it delivered and the tasks it accepted", async () => {
    sim = await startSimulator({ seed: 7 });
    const stream = await fetch(`${sim.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`, {
      method: "POST",
      headers: KEY,
      body: JSON.stringify({ contents: [{ parts: [{ text: "u1 stream [chunks=4]" }] }] }),
    });
    const events = (await stream.text()).split("\r\n\r\n").filter((e) => e.startsWith("data: "));
    const sent = events.map((e) => JSON.parse(e.slice(6)).usageMetadata);

    const images = await fetch(`${sim.url}/v1/images/generations`, {
      method: "POST",
      headers: { authorization: "Bearer k", "content-type": "application/json" },
      body: JSON.stringify({ prompt: "u1 picture [fewer]", n: 3 }),
    });
    const delivered = ((await images.json()) as { data: unknown[] }).data.length;

    const task = await fetch(`${sim.url}/audioa/submit/music`, {
      method: "POST",
      headers: { authorization: "Bearer k", "content-type": "application/json" },
      body: JSON.stringify({ prompt: "u1 song [fail]" }),
    });
    const taskId = ((await task.json()) as { data: string }).data;

    const records = await usageLog(sim.url);
    expect(records.map((r) => r.protocol)).toEqual(["gemini", "openai-images", "task-relay"]);
    expect(records[0]).toMatchObject({ prompt: "u1 stream [chunks=4]", complete: true, usage: sent });
    expect(sent).toHaveLength(4);
    expect(records[1]).toMatchObject({ prompt: "u1 picture [fewer]", images: delivered, complete: true });
    expect(delivered).toBe(2);
    expect(records[2]).toMatchObject({ task: { id: taskId, ends: "failure" } });
  });

  it("records a stream its client left mid-way as incomplete, with only the chunks written", async () => {
    sim = await startSimulator({ seed: 7, gemini: { text: { chunkDelayMs: 50 } } });
    const controller = new AbortController();
    const res = await fetch(`${sim.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`, {
      method: "POST",
      headers: KEY,
      body: JSON.stringify({ contents: [{ parts: [{ text: "u2 long [chunks=40]" }] }] }),
      signal: controller.signal,
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    controller.abort();
    await expect.poll(async () => (await usageLog((sim as Simulator).url))[0]?.usage.length ?? 0).toBeGreaterThan(0);
    // The simulator notices the abort at its next write; after that it writes nothing more.
    await expect.poll(() => sim?.received[0]?.aborted).toBe(true);
    const [record] = await usageLog(sim.url);
    expect(record?.complete).toBe(false);
    expect(record?.usage.length).toBeLessThan(40);
  });
});
