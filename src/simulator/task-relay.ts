import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type RelayOutput, relayClip, relayOutputs } from "./relay-actions.js";
import type { SimulatorState } from "./state.js";

/** A task as a simulated upstream keeps it: its whole future is decided at submit. */
export interface SimTask {
  id: string;
  action: string;
  createdAt: number;
  completeAfterMs: number;
  fails: boolean;
  /** Answers an odd status word while running (prompt marker `[odd-status]`). */
  oddStatus: boolean;
  clipIds: string[];
  title: string;
  tags: string;
  prompt: string;
  model: string;
}

/** Where a task is at `now`, computed from the elapsed time alone (no timer per task). */
export function simPhase(task: SimTask, now: number, queuedFraction: number) {
  const fraction = Math.max(0, (now - task.createdAt) / Math.max(1, task.completeAfterMs));
  if (fraction >= 1) return { phase: "done" as const, fraction: 1 };
  if (fraction < queuedFraction) return { phase: "queued" as const, fraction };
  return { phase: "running" as const, fraction };
}

/** A UUID v4 made from the simulator's seeded random numbers. */
export function simUuid(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16));
  hex[12] = "4";
  hex[16] = "89ab"[Math.floor(random() * 4)] as string;
  const h = hex.join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** True when any string field of the body holds the marker, e.g. `[fail]`. */
export function hasMarker(body: unknown, marker: string): boolean {
  if (!body || typeof body !== "object") return false;
  return Object.values(body as Record<string, unknown>).some((v) => typeof v === "string" && v.includes(marker));
}

/** Checks `Authorization: Bearer <key>` against the simulator's keys (any non-empty key when unset). */
export function bearerAccepted(state: SimulatorState, request: FastifyRequest): boolean {
  const header = request.headers.authorization;
  const match = typeof header === "string" ? /^Bearer\s+(\S+)$/i.exec(header) : null;
  const key = match?.[1];
  if (!key) return false;
  return !state.options.keys || state.options.keys.includes(key);
}

export function simDelay(ms: number | undefined): Promise<void> {
  return ms && ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}

/**
 * What every call of a task protocol does first: the request recorded, the simulated latency
 * waited; true when its Bearer key is accepted.
 */
export async function receivedTaskCall(
  state: SimulatorState,
  protocol: "task-relay" | "generate-record",
  request: FastifyRequest,
  body: unknown,
  latencyMs: number | undefined,
): Promise<boolean> {
  state.record({ protocol, method: request.method, path: request.url, headers: request.headers, body });
  await simDelay(latencyMs);
  return bearerAccepted(state, request);
}

/**
 * Whether a task submitted now will fail: `[fail]` in any string field of its body, an action
 * set to fail, or a draw under the failure rate.
 */
export function failsAtSubmit(
  state: SimulatorState,
  body: Record<string, unknown>,
  action: string,
  faults: { failActions?: string[]; failureRate?: number },
): boolean {
  return (
    hasMarker(body, "[fail]") ||
    (faults.failActions ?? []).includes(action) ||
    state.random() < (faults.failureRate ?? 0)
  );
}

/**
 * The `task-relay` protocol: `POST /{prefix}/submit/{ACTION}` and `POST /{prefix}/fetch`, any
 * prefix. A task's state is computed from the time since its submit, so thousands of tasks in
 * flight cost nothing between calls.
 */
export async function taskRelaySimulator(app: FastifyInstance, opts: { state: SimulatorState }) {
  const { state } = opts;
  const tasks = new Map<string, SimTask>();
  // What each task yields, by action (songs, stems, a WAV, a video, lyric sheets).
  const outputs = new Map<string, RelayOutput[]>();
  const o = () => state.options.taskRelay ?? {};

  const refuse = (reply: FastifyReply, status: number, message: string) =>
    reply.status(status).send({ code: status === 401 ? "unauthorized" : "invalid_request", message, data: null });

  app.post("/:prefix/submit/:action", async (request, reply) => {
    const { action } = request.params as { prefix: string; action: string };
    if (!(await receivedTaskCall(state, "task-relay", request, request.body, o().latencyMs))) {
      return refuse(reply, 401, "invalid api key");
    }
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (hasMarker(body, "[refuse]") || state.random() < (o().refuseRate ?? 0)) {
      return refuse(reply, 400, "the prompt was refused by the simulated upstream");
    }
    const id = simUuid(state.random);
    const made = relayOutputs(action, body, o().clipsPerTask ?? 2, () => simUuid(state.random));
    const task: SimTask = {
      id,
      action,
      createdAt: Date.now(),
      completeAfterMs: o().completeAfterMs ?? 3000,
      fails: failsAtSubmit(state, body, action, o()),
      oddStatus: hasMarker(body, "[odd-status]"),
      clipIds: made.map((m) => m.id),
      title: typeof body.title === "string" ? body.title : "Untitled",
      tags: typeof body.tags === "string" ? body.tags : typeof body.sound_prompt === "string" ? body.sound_prompt : "",
      prompt: typeof body.prompt === "string" ? body.prompt : "[Verse]\nsimulated lyrics",
      model: typeof body.mv === "string" ? body.mv : "chirp-v3-5",
    };
    tasks.set(task.id, task);
    outputs.set(task.id, made);
    state.usage.openTask("task-relay", task, task.fails ? "failure" : "success");
    return { code: "success", message: "", data: task.id };
  });

  app.post("/:prefix/fetch", async (request, reply) => {
    if (!(await receivedTaskCall(state, "task-relay", request, request.body, o().latencyMs))) {
      return refuse(reply, 401, "invalid api key");
    }
    const ids = (request.body as { ids?: unknown })?.ids;
    if (!Array.isArray(ids) || ids.some((id) => typeof id !== "string")) {
      return refuse(reply, 400, "ids must be an array of strings");
    }
    if (ids.length > (o().maxBatch ?? 100)) return refuse(reply, 400, `at most ${o().maxBatch ?? 100} ids per call`);
    const now = Date.now();
    const steps = Math.max(1, o().progressSteps ?? 5);
    const queuedFraction = o().queuedFraction ?? 0.1;
    const data = [];
    for (const id of ids as string[]) {
      const task = tasks.get(id);
      if (!task) continue;
      const { phase, fraction } = simPhase(task, now, queuedFraction);
      const done = phase === "done";
      const status = done
        ? task.fails
          ? "FAILURE"
          : "SUCCESS"
        : phase === "queued"
          ? "QUEUED"
          : task.oddStatus
            ? "PAUSED_FOR_REVIEW"
            : "IN_PROGRESS";
      const percent = done ? 100 : phase === "queued" ? 0 : Math.floor(fraction * steps) * Math.floor(100 / steps);
      const submitTime = Math.floor(task.createdAt / 1000);
      data.push({
        task_id: task.id,
        action: task.action,
        status,
        fail_reason: done && task.fails ? "simulated failure" : "",
        submit_time: submitTime,
        start_time:
          phase === "queued" ? 0 : Math.floor((task.createdAt + task.completeAfterMs * queuedFraction) / 1000),
        finish_time: done ? Math.floor((task.createdAt + task.completeAfterMs) / 1000) : 0,
        progress: `${percent}%`,
        data: phase === "queued" ? [] : (outputs.get(task.id) ?? []).map((out) => relayClip(state, task, out, phase)),
      });
    }
    return { code: "success", message: "", data };
  });
}
