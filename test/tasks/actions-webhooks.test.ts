import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Receiver, startReceiver } from "../webhooks/receiver.js";
import { runAction, succeededClip } from "./actions-harness.js";
import { eventually, fetchTask, startTaskEnv, type TaskEnv } from "./harness.js";

describe("webhooks of the further actions", () => {
  let env: TaskEnv;
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    env = await startTaskEnv("sqlite", {
      sim: { taskRelay: { completeAfterMs: 200, failActions: ["WAV"] } },
      config: {
        webhooks: { allowPrivateUrls: true, tickMs: 20, retryBaseMs: 50, maxAgeSeconds: 3600, timeoutMs: 5000 },
      },
    });
  });
  afterAll(async () => {
    await env?.close();
    await receiver?.close();
  });

  it("announce each ended action once at its callback_url, with the record a fetch shows", async () => {
    const user = await env.gw.createUser({ quota: 1_000_000 });
    const clipId = await succeededClip(env, user.key);
    const hook = (name: string) => `${receiver.url}/hooks/${name}`;
    const lyrics = await runAction(env, user.key, "LYRICS", { prompt: "a harbour", callback_url: hook("lyrics") });
    const stems = await runAction(env, user.key, "STEMS", {
      clip_id: clipId,
      kind: "vocals",
      callback_url: hook("stems"),
    });
    const wav = await runAction(env, user.key, "WAV", { clip_id: clipId, callback_url: hook("wav") });
    const expected = [
      { taskId: lyrics.taskId, path: "/hooks/lyrics", type: "task.succeeded" },
      { taskId: stems.taskId, path: "/hooks/stems", type: "task.succeeded" },
      { taskId: wav.taskId, path: "/hooks/wav", type: "task.failed" },
    ];
    await eventually(async () => expected.every((e) => receiver.deliveries.some((d) => d.path === e.path)));
    for (const e of expected) {
      const got = receiver.deliveries.filter((d) => d.path === e.path);
      expect(got).toHaveLength(1);
      const payload = JSON.parse((got[0] as { body: string }).body);
      expect(payload.type).toBe(e.type);
      expect(payload.data).toEqual((await fetchTask(env.gw.url, user.key, "audioa", e.taskId)).body.data);
    }
    // callback_url is the gateway's own field: the upstream never sees it.
    for (const r of env.sim.received) expect(JSON.stringify(r.body ?? {})).not.toContain(receiver.url);
  });
});
