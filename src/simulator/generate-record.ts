import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  isFailedWord,
  type RecordRoute,
  type RecordTask,
  stageOf,
  statusWord,
  subRecordData,
  sunoData,
} from "./generate-record-results.js";
import type { SimulatorState } from "./state.js";
import { failsAtSubmit, hasMarker, receivedTaskCall, simUuid } from "./task-relay.js";

/** One submit route of the provider: the action it does, where it is polled, what it requires. */
interface SubmitRoute {
  path: string;
  action: string;
  route: RecordRoute;
  required: string[];
  /** Works on a clip of an earlier music task named by `taskId` + `audioId`. */
  sourceClip?: boolean;
}

const SUBMIT_ROUTES: SubmitRoute[] = [
  { path: "/api/v1/generate", action: "MUSIC", route: "generate", required: [] },
  { path: "/api/v1/generate/extend", action: "EXTEND", route: "generate", required: ["audioId", "continueAt"] },
  {
    path: "/api/v1/generate/upload-extend",
    action: "EXTEND",
    route: "generate",
    required: ["uploadUrl", "continueAt"],
  },
  { path: "/api/v1/generate/upload-cover", action: "COVER", route: "generate", required: ["uploadUrl"] },
  { path: "/api/v1/generate/add-instrumental", action: "ADD_INSTRUMENTAL", route: "generate", required: ["uploadUrl"] },
  { path: "/api/v1/generate/add-vocals", action: "ADD_VOCALS", route: "generate", required: ["uploadUrl"] },
  { path: "/api/v1/lyrics", action: "LYRICS", route: "lyrics", required: ["prompt"] },
  {
    path: "/api/v1/vocal-removal/generate",
    action: "STEMS",
    route: "vocal-removal",
    required: ["taskId", "audioId", "type"],
    sourceClip: true,
  },
  { path: "/api/v1/wav/generate", action: "WAV", route: "wav", required: ["taskId", "audioId"], sourceClip: true },
  {
    path: "/api/v1/mp4/generate",
    action: "MUSIC_VIDEO",
    route: "mp4",
    required: ["taskId", "audioId"],
    sourceClip: true,
  },
];

const POLL_ROUTES: Record<RecordRoute, string> = {
  generate: "/api/v1/generate/record-info",
  lyrics: "/api/v1/lyrics/record-info",
  "vocal-removal": "/api/v1/vocal-removal/record-info",
  wav: "/api/v1/wav/record-info",
  mp4: "/api/v1/mp4/record-info",
};

const STEM_TYPES = ["separate_vocal", "split_stem"];

function present(value: unknown): boolean {
  return value !== undefined && value !== null && value !== "";
}

/**
 * The `generate-record` protocol: one submit route per action (`POST /api/v1/generate`,
 * `/generate/extend`, `/lyrics`, `/vocal-removal/generate`, `/wav/generate`, `/mp4/generate`...),
 * each polled at its own `record-info`, with optional callbacks; the media files it reports are
 * served by the simulator's media route (media-files.ts). States come from the elapsed time; one timer (not one
 * per task) sends the callbacks. Faults: `failureRate`, `refuseRate`, `failActions`, `[fail]` and
 * `[refuse]` in any string field.
 */
export async function generateRecordSimulator(app: FastifyInstance, opts: { state: SimulatorState }) {
  const { state } = opts;
  const tasks = new Map<string, RecordTask>();
  const pendingCallbacks = new Set<RecordTask>();
  let timer: NodeJS.Timeout | null = null;
  const o = () => state.options.generateRecord ?? {};

  const refuse = (reply: FastifyReply, code: number, msg: string) => reply.status(200).send({ code, msg, data: null });
  const received = (request: FastifyRequest, body: unknown) =>
    receivedTaskCall(state, "generate-record", request, body, o().latencyMs);

  const callbackBody = (task: RecordTask, word: string, stage: number) => {
    const failed = task.fails && stage >= 3;
    const callbackType = stage === 1 ? "text" : stage === 2 ? "first" : failed ? "error" : "complete";
    const data =
      task.route === "generate"
        ? { callbackType, task_id: task.id, data: sunoData(state, task, word) }
        : { callbackType, task_id: task.id, ...subRecordData(state, task, word) };
    return { code: failed ? 501 : 200, msg: failed ? "simulated failure" : "All generated successfully.", data };
  };

  const sendCallbacks = () => {
    const now = Date.now();
    for (const task of pendingCallbacks) {
      const word = statusWord(task, now);
      const stage = stageOf(word);
      if (stage <= task.callbacksSent || !task.callbackUrl) continue;
      task.callbacksSent = stage;
      if (stage >= 3) pendingCallbacks.delete(task);
      void fetch(task.callbackUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(callbackBody(task, word, stage)),
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

  /** The source task's clip named by `taskId` + `audioId`, when it is a clip of a succeeded music task. */
  const sourceClipOf = (body: Record<string, unknown>): RecordTask | null => {
    const source = tasks.get(String(body.taskId));
    if (source?.route !== "generate" || statusWord(source, Date.now()) !== "SUCCESS") return null;
    return source.clipIds.includes(String(body.audioId)) ? source : null;
  };

  for (const submit of SUBMIT_ROUTES) {
    app.post(submit.path, async (request, reply) => {
      if (!(await received(request, request.body)))
        return reply.status(401).send({ code: 401, msg: "invalid api key", data: null });
      const body = (request.body ?? {}) as Record<string, unknown>;
      const missing = submit.required.find((field) => !present(body[field]));
      if (missing) return refuse(reply, 422, `${missing} is required`);
      if (submit.route === "vocal-removal" && !STEM_TYPES.includes(String(body.type))) {
        return refuse(reply, 422, "type must be separate_vocal or split_stem");
      }
      if (submit.sourceClip && !sourceClipOf(body)) return refuse(reply, 400, "no such music record");
      if (hasMarker(body, "[refuse]") || state.random() < (o().refuseRate ?? 0)) {
        return refuse(reply, 400, "the prompt was refused by the simulated upstream");
      }
      const clips = submit.route === "generate" || submit.route === "lyrics" ? Math.max(1, o().clipsPerTask ?? 2) : 1;
      const task: RecordTask = {
        id: simUuid(state.random).replace(/-/g, "").slice(0, 24),
        action: submit.action,
        route: submit.route,
        createdAt: Date.now(),
        completeAfterMs: o().completeAfterMs ?? 3000,
        fails: failsAtSubmit(state, body, submit.action, o()),
        oddStatus: false,
        clipIds: Array.from({ length: clips }, () => simUuid(state.random)),
        durations: Array.from({ length: clips }, () => Math.round((120 + state.random() * 120) * 100) / 100),
        title: typeof body.title === "string" ? body.title : "Untitled",
        tags: typeof body.style === "string" ? body.style : typeof body.tags === "string" ? body.tags : "pop, upbeat",
        prompt: typeof body.prompt === "string" ? body.prompt : "",
        model: typeof body.model === "string" ? body.model : "V4_5",
        callbackUrl: typeof body.callBackUrl === "string" && body.callBackUrl !== "" ? body.callBackUrl : null,
        callbacksSent: 0,
        stemType: typeof body.type === "string" ? body.type : undefined,
        sourceClipId: submit.sourceClip ? String(body.audioId) : undefined,
      };
      tasks.set(task.id, task);
      state.usage.openTask("generate-record", task, task.fails ? "failure" : "success");
      if (task.callbackUrl && (o().callbacks ?? true)) {
        pendingCallbacks.add(task);
        if (!timer) {
          timer = setInterval(sendCallbacks, o().callbackTickMs ?? 20);
          timer.unref();
        }
      }
      return { code: 200, msg: "success", data: { taskId: task.id } };
    });
  }

  for (const [route, path] of Object.entries(POLL_ROUTES) as [RecordRoute, string][]) {
    app.get(path, async (request, reply) => {
      if (!(await received(request, null)))
        return reply.status(401).send({ code: 401, msg: "invalid api key", data: null });
      const taskId = (request.query as { taskId?: string }).taskId ?? "";
      const task = tasks.get(taskId);
      // Each route knows only its own tasks.
      if (!task || task.route !== route) return refuse(reply, 404, "task not found");
      const word = statusWord(task, Date.now());
      if (route !== "generate") return { code: 200, msg: "success", data: subRecordData(state, task, word) };
      const failed = isFailedWord(word);
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
}
