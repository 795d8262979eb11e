import type { FastifyInstance, FastifyReply } from "fastify";
import { simMediaUrl } from "./media-files.js";
import type { SimulatorState } from "./state.js";
import { bearerAccepted, hasMarker, type SimTask, simDelay, simPhase, simUuid } from "./task-relay.js";

interface RecordTask extends SimTask {
  callbackUrl: string | null;
  /** Callback stages already sent (0 none, 1 text, 2 first, 3 complete or error). */
  callbacksSent: number;
  durations: number[];
}

const TEXT_AT = 0.3;
const FIRST_AT = 0.6;

function statusWord(task: RecordTask, now: number): string {
  const { phase, fraction } = simPhase(task, now, 0);
  if (phase === "done") return task.fails ? "GENERATE_AUDIO_FAILED" : "SUCCESS";
  if (fraction >= FIRST_AT) return "FIRST_SUCCESS";
  if (fraction >= TEXT_AT) return "TEXT_SUCCESS";
  return "PENDING";
}

function stageOf(word: string): number {
  if (word === "TEXT_SUCCESS") return 1;
  if (word === "FIRST_SUCCESS") return 2;
  if (word === "SUCCESS" || word === "GENERATE_AUDIO_FAILED") return 3;
  return 0;
}

function createTime(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ").slice(0, 19);
}

function sunoData(state: SimulatorState, task: RecordTask, word: string) {
  const stage = stageOf(word);
  if (stage === 0 || word === "GENERATE_AUDIO_FAILED") return [];
  return task.clipIds.map((id, i) => {
    const ready = stage >= 3 || (stage === 2 && i === 0);
    return {
      id,
      audioUrl: ready ? simMediaUrl(state, id, "mp3") : "",
      streamAudioUrl: simMediaUrl(state, `${id}-s`, "mp3"),
      imageUrl: simMediaUrl(state, id, "png"),
      prompt: task.prompt,
      modelName: `chirp-${task.model.toLowerCase().replace(/_/g, "-")}`,
      title: task.title,
      tags: task.tags,
      createTime: createTime(task.createdAt),
      duration: ready ? task.durations[i] : null,
    };
  });
}

/**
 * The `generate-record` protocol: `POST /api/v1/generate` and
 * `GET /api/v1/generate/record-info?taskId=`, with optional callbacks. States come from the
 * elapsed time; one timer (not one per task) sends the callbacks.
 */
export async function generateRecordSimulator(app: FastifyInstance, opts: { state: SimulatorState }) {
  const { state } = opts;
  const tasks = new Map<string, RecordTask>();
  const pendingCallbacks = new Set<RecordTask>();
  let timer: NodeJS.Timeout | null = null;
  const o = () => state.options.generateRecord ?? {};

  const refuse = (reply: FastifyReply, code: number, msg: string) => reply.status(200).send({ code, msg, data: null });

  const sendCallbacks = () => {
    const now = Date.now();
    for (const task of pendingCallbacks) {
      const word = statusWord(task, now);
      const stage = stageOf(word);
      if (stage <= task.callbacksSent || !task.callbackUrl) continue;
      task.callbacksSent = stage;
      if (stage >= 3) pendingCallbacks.delete(task);
      const callbackType = stage === 1 ? "text" : stage === 2 ? "first" : task.fails ? "error" : "complete";
      const body = {
        code: task.fails && stage >= 3 ? 501 : 200,
        msg: task.fails && stage >= 3 ? "simulated failure" : "All generated successfully.",
        data: { callbackType, task_id: task.id, data: sunoData(state, task, word) },
      };
      void fetch(task.callbackUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      }).catch(() => {});
    }
    if (pendingCallbacks.size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
  };

  app.addHook("onClose", async () => {
    if (timer) clearInterval(timer);
    timer = null;
  });

  app.post("/api/v1/generate", async (request, reply) => {
    state.record({
      protocol: "generate-record",
      method: "POST",
      path: request.url,
      headers: request.headers,
      body: request.body,
    });
    await simDelay(o().latencyMs);
    if (!bearerAccepted(state, request))
      return reply.status(401).send({ code: 401, msg: "invalid api key", data: null });
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (hasMarker(body, "[refuse]") || state.random() < (o().refuseRate ?? 0)) {
      return refuse(reply, 400, "the prompt was refused by the simulated upstream");
    }
    const clips = Math.max(1, o().clipsPerTask ?? 2);
    const task: RecordTask = {
      id: simUuid(state.random).replace(/-/g, "").slice(0, 24),
      action: "MUSIC",
      createdAt: Date.now(),
      completeAfterMs: o().completeAfterMs ?? 3000,
      fails: hasMarker(body, "[fail]") || state.random() < (o().failureRate ?? 0),
      oddStatus: false,
      clipIds: Array.from({ length: clips }, () => simUuid(state.random)),
      durations: Array.from({ length: clips }, () => Math.round((120 + state.random() * 120) * 100) / 100),
      title: typeof body.title === "string" ? body.title : "Untitled",
      tags: typeof body.style === "string" ? body.style : "pop, upbeat",
      prompt: typeof body.prompt === "string" ? body.prompt : "",
      model: typeof body.model === "string" ? body.model : "V4_5",
      callbackUrl: typeof body.callBackUrl === "string" && body.callBackUrl !== "" ? body.callBackUrl : null,
      callbacksSent: 0,
    };
    tasks.set(task.id, task);
    state.usage.open({
      protocol: "generate-record",
      model: task.model,
      prompt: task.prompt,
      task: { id: task.id, ends: task.fails ? "failure" : "success" },
      complete: true,
    });
    if (task.callbackUrl && (o().callbacks ?? true)) {
      pendingCallbacks.add(task);
      if (!timer) {
        timer = setInterval(sendCallbacks, o().callbackTickMs ?? 20);
        timer.unref();
      }
    }
    return { code: 200, msg: "success", data: { taskId: task.id } };
  });

  app.get("/api/v1/generate/record-info", async (request, reply) => {
    state.record({
      protocol: "generate-record",
      method: "GET",
      path: request.url,
      headers: request.headers,
      body: null,
    });
    await simDelay(o().latencyMs);
    if (!bearerAccepted(state, request))
      return reply.status(401).send({ code: 401, msg: "invalid api key", data: null });
    const taskId = (request.query as { taskId?: string }).taskId ?? "";
    const task = tasks.get(taskId);
    if (!task) return refuse(reply, 404, "task not found");
    const word = statusWord(task, Date.now());
    const failed = word === "GENERATE_AUDIO_FAILED";
    return {
      code: 200,
      msg: "success",
      data: {
        taskId: task.id,
        status: word,
        response: { taskId: task.id, sunoData: sunoData(state, task, word) },
        errorCode: failed ? 501 : null,
        errorMessage: failed ? "simulated failure" : null,
      },
    };
  });
}
