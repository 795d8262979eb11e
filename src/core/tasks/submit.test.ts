import { describe, expect, it } from "vitest";
import type { Channel } from "../channel.js";
import { GatewayError } from "../errors.js";
import { UpstreamError } from "../upstream-error.js";
import { findKind, type TaskKind } from "./kinds.js";
import type { NewTask, OutgoingTask, StoredTask, TaskSubmitDeps, TaskUpstream } from "./ports.js";
import { submitTask } from "./submit.js";

function channel(id: number, priority: number): Channel {
  return {
    id,
    name: `c${id}`,
    type: "task-relay",
    baseUrl: "http://upstream.invalid",
    key: "k",
    models: ["audioa"],
    modelMapping: { "chirp-v3-5": "chirp-mapped" },
    groups: ["default"],
    priority,
    weight: 1,
    priceRatio: 1,
    keyRotation: "round_robin",
    tags: [],
    status: "enabled",
    statusReason: "",
    settings: {},
    failureCount: 0,
    lastError: null,
    lastErrorAt: null,
    lastSuccessAt: null,
    successCount: 0,
    requestCount: 0,
    recentSuccessRate: 1,
    createdAt: 0,
    updatedAt: 0,
  };
}

/** An in-memory task store and a scripted upstream, recording what the use case did. */
function world(
  answers: ((task: OutgoingTask, channel: Channel) => string)[],
  kinds = ["audioa:MUSIC", "audioa:UPLOAD"],
) {
  const events: string[] = [];
  const rows: StoredTask[] = [];
  let slotsInUse = 0;
  const upstream: TaskUpstream = {
    kinds,
    minPollIntervalMs: 0,
    defaultConcurrency: 4,
    batchSize: () => 100,
    async submit(ch, task) {
      expect(slotsInUse).toBe(1);
      const answer = answers.shift();
      if (!answer) throw new Error("unexpected send");
      return answer(task, ch);
    },
    poll: async () => new Map(),
  };
  const deps: TaskSubmitDeps = {
    store: {
      async insertCharged(t: NewTask) {
        events.push(`charge ${t.quota}`);
        const row = { id: rows.length + 1, task_id: t.taskId, status: "NOT_START", user_id: t.userId } as StoredTask;
        rows.push(row);
        return row;
      },
      async switchChannel(_id: number, channelId: number) {
        events.push(`switch ${channelId}`);
        return true;
      },
      async markSent(id: number, upstreamId: string, channelId: number) {
        events.push(`sent ${upstreamId} on ${channelId}`);
        (rows[id - 1] as StoredTask).status = "SUBMITTED";
        return true;
      },
      async recordBody(_id: number, body: string) {
        events.push(`record ${body}`);
        return true;
      },
      async withdraw(id: number, reason: string) {
        events.push(`withdraw: ${reason}`);
        rows.splice(id - 1, 1);
        return true;
      },
      async fail(id: number, from: string, reason: string) {
        events.push(`fail from ${from}: ${reason}`);
        (rows[id - 1] as StoredTask).status = "FAILURE";
        return true;
      },
      getOwned: async () => undefined,
      findOwnedClip: async () => undefined,
    } as unknown as TaskSubmitDeps["store"],
    upstreams: (type) => (type === "task-relay" ? upstream : undefined),
    slots: {
      async acquire() {
        slotsInUse += 1;
        return () => {
          slotsInUse -= 1;
        };
      },
    },
    channels: {
      candidates: async () => [channel(1, 10), channel(2, 0)],
      report: (ch, error) => events.push(`report ${ch.id} ${error ? error.kind : "ok"}`),
    },
    prices: { taskPrice: async () => 0.1, groupRatio: async () => 1 },
    intake: {
      timeoutMs: 5_000,
      async bringIn(url, field) {
        events.push(`bring in ${url}`);
        if (url.includes("missing")) {
          throw new GatewayError("GW_ERR_VALIDATION", `body.${field} answered HTTP 404`, { param: field });
        }
        const discard = async () => {
          events.push("discard");
        };
        return { url: "http://gateway.invalid/audioa/files/k.mp3", contentType: "audio/mpeg", bytes: 1, discard };
      },
    },
    checkCallbackUrl: async (url) => url,
    upstreamCallbackUrl: () => "http://gateway.invalid/cb",
    ids: { newTaskId: () => "task_1", taskIdOfRun: (run) => `task_${run}`, secret: () => "s" },
    now: () => 1_000_000,
    settings: {
      quotaPerUnit: 500_000,
      unsentGraceMs: 60_000,
      pollIntervalMs: 1000,
      timeoutSeconds: 600,
      leaseMs: 30_000,
      tasksInFlightPerUser: 0,
    },
    onRateLimited: () => {},
    log: { debug() {}, info() {}, warn() {}, error() {} },
  };
  return { deps, events, rows, slots: () => slotsInUse };
}

const music = findKind("audioa", "MUSIC") as TaskKind;
const upload = findKind("audioa", "UPLOAD") as TaskKind;
const caller = { userId: 7, tokenId: 3, group: "default" };

describe("submitting a task", () => {
  it("answers the id once charged, before anything is sent, and sends it with the mapped model", async () => {
    const { deps, events, slots } = world([(task) => `up-${task.upstreamModel}`]);
    const submitted = await submitTask(deps, { kind: music, body: { prompt: "la" }, caller });
    expect(submitted.taskId).toBe("task_1");
    expect(events).toEqual(["charge 50000"]);
    await submitted.send?.();
    expect(events).toEqual(["charge 50000", "report 1 ok", "sent up-chirp-mapped on 1"]);
    expect(slots()).toBe(0);
  });

  it("ends a refused task as FAILURE with the upstream's reason, once, without trying another channel", async () => {
    const { deps, events, rows, slots } = world([
      () => {
        throw new UpstreamError("refused", "upstream refused the task: content rules", { status: 400 });
      },
    ]);
    const submitted = await submitTask(deps, { kind: music, body: { prompt: "la" }, caller });
    await expect(submitted.send?.()).resolves.toBeUndefined();
    expect(events).toEqual([
      "charge 50000",
      "report 1 refused",
      "fail from NOT_START: upstream refused the task: content rules",
    ]);
    expect(rows[0]?.status).toBe("FAILURE");
    expect(slots()).toBe(0);
  });

  it("fails over to the next channel on a retryable failure, and fails the task when none takes it", async () => {
    const flaky = () => {
      throw new UpstreamError("retryable", "connection refused");
    };
    const ok = world([flaky, () => "up-2"]);
    await (await submitTask(ok.deps, { kind: music, body: { prompt: "la" }, caller })).send?.();
    expect(ok.events).toEqual(["charge 50000", "report 1 retryable", "switch 2", "report 2 ok", "sent up-2 on 2"]);

    const none = world([flaky, flaky]);
    await (await submitTask(none.deps, { kind: music, body: { prompt: "la" }, caller })).send?.();
    expect(none.events.at(-1)).toBe("fail from NOT_START: no upstream channel accepted the task: connection refused");
  });

  it("refuses before any charge what the gateway can judge: a bad body, no channel able to do the kind", async () => {
    const bad = world([]);
    await expect(submitTask(bad.deps, { kind: music, body: { title: "no prompt" }, caller })).rejects.toThrow(
      GatewayError,
    );
    expect(bad.events).toEqual([]);

    const unable = world([], ["audioa:REPLACE"]);
    await expect(submitTask(unable.deps, { kind: music, body: { prompt: "la" }, caller })).rejects.toMatchObject({
      errorName: "GW_ERR_NO_CHANNEL",
    });
    expect(unable.events).toEqual([]);
  });

  it("brings an UPLOAD's file in only once the hold is taken, and records the stored copy before the send", async () => {
    const { deps, events } = world([(task) => `up-${(task.body as { url: string }).url}`]);
    const submitted = await submitTask(deps, { kind: upload, body: { url: "https://files.example/a.mp3" }, caller });
    expect(events).toEqual([
      "charge 50000",
      "bring in https://files.example/a.mp3",
      'record {"url":"http://gateway.invalid/audioa/files/k.mp3"}',
    ]);
    await submitted.send?.();
    expect(events.at(-1)).toBe("sent up-http://gateway.invalid/audioa/files/k.mp3 on 1");
  });

  it("withdraws the task, refunding its hold, when its file cannot be brought in", async () => {
    const { deps, events, rows } = world([]);
    await expect(
      submitTask(deps, { kind: upload, body: { url: "https://files.example/missing.mp3" }, caller }),
    ).rejects.toMatchObject({ errorName: "GW_ERR_VALIDATION", message: "body.url answered HTTP 404" });
    expect(events).toEqual([
      "charge 50000",
      "bring in https://files.example/missing.mp3",
      "withdraw: body.url answered HTTP 404",
    ]);
    expect(rows).toEqual([]);
  });

  it("moves the send deadline by the intake's time limit, and removes the stored copy when the task was swept", async () => {
    const { deps, events } = world([]);
    let deadline = 0;
    const insert = deps.store.insertCharged.bind(deps.store);
    deps.store.insertCharged = (t: NewTask) => {
      deadline = t.sendDeadlineMs;
      return insert(t);
    };
    deps.store.recordBody = async () => false;
    await expect(
      submitTask(deps, { kind: upload, body: { url: "https://files.example/a.mp3" }, caller }),
    ).rejects.toMatchObject({ errorName: "GW_ERR_BUSY" });
    expect(deadline).toBe(1_000_000 + 60_000 + 5_000);
    expect(events).toEqual(["charge 50000", "bring in https://files.example/a.mp3", "discard"]);
  });
});
