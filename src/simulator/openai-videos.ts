import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type VideoDownload, videoContentRoutes } from "./openai-videos-download.js";
import { advanceVideo, forgotten, planVideo, type SimVideo, videoId, videoObject } from "./openai-videos-lifecycle.js";
import {
  checkCreate,
  type OpenAiVideosReceived,
  openAiError,
  readJson,
  readMultipart,
  type VideoCreateRequest,
  videoNotFound,
} from "./openai-videos-request.js";
import type { SimulatorState } from "./state.js";
import { bearerAccepted, simDelay } from "./task-relay.js";

export type { VideoObject } from "../core/videos/video-object.js";
export type { VideoDownload } from "./openai-videos-download.js";
export type { OpenAiVideosReceived, VideoReference } from "./openai-videos-request.js";

const notFound = (reply: FastifyReply, id: string) => reply.status(404).send(videoNotFound(id));

/**
 * The `openai-videos` protocol (the OpenAI Videos API) under `/v1/videos`: create (JSON or
 * multipart), retrieve (each retrieve moves a video one step on), content (a real MP4, a PNG
 * thumbnail and spritesheet; ranges on all), remix, list and delete; and, for a test run,
 * `GET /simulator/videos/downloads` (read-only): each content download, begun and ended.
 */
export async function openAiVideosSimulator(app: FastifyInstance, opts: { state: SimulatorState }) {
  const { state } = opts;
  const videos = new Map<string, SimVideo>();
  const downloads: VideoDownload[] = [];
  const o = () => state.options.videos ?? {};

  app.addContentTypeParser("multipart/form-data", { parseAs: "buffer" }, (_request, body, done) => done(null, body));

  const record = (request: FastifyRequest, body: unknown) =>
    state.record({
      protocol: "openai-videos",
      method: request.method,
      path: request.url,
      headers: request.headers,
      body,
    });

  app.addHook("preHandler", async (request, reply) => {
    if (!request.url.startsWith("/v1/videos")) return;
    await simDelay(o().latencyMs);
    if (!bearerAccepted(state, request)) {
      record(request, null);
      return reply
        .status(401)
        .send(openAiError("Incorrect API key provided.", "invalid_request_error", null, "invalid_api_key"));
    }
  });

  /** Creates a video (a create or a remix), or answers the error its plan decides. */
  function startVideo(reply: FastifyReply, request: VideoCreateRequest, remixedFrom: string | null) {
    const plan = planVideo(request.prompt, o(), state.random);
    if (plan.createStatus === 500) {
      return reply
        .status(500)
        .send(openAiError("The server had an error while processing your request.", "server_error"));
    }
    if (plan.createStatus === 429) {
      return reply
        .status(429)
        .send(openAiError("Rate limit reached for videos per minute.", "requests", null, "rate_limit_exceeded"));
    }
    const video: SimVideo = {
      id: videoId(state.random),
      model: request.model,
      prompt: request.prompt,
      seconds: request.seconds,
      size: request.size,
      createdAt: Date.now(),
      remixedFrom,
      ends: plan.ends,
      pollErrors: plan.pollErrors,
      slowContentMs: plan.slowContentMs,
      polls: 0,
      finishedAt: null,
    };
    videos.set(video.id, video);
    const succeeds = video.ends === "completed" && plan.pollErrors !== Number.POSITIVE_INFINITY;
    state.usage.openTask("openai-videos", video, succeeds ? "success" : "failure");
    return reply.send(videoObject(video, o()));
  }

  app.post("/v1/videos", async (request, reply) => {
    const contentType = String(request.headers["content-type"] ?? "");
    const multipart = Buffer.isBuffer(request.body);
    let read: ReturnType<typeof readJson>;
    try {
      read = multipart ? await readMultipart(request.body as Buffer, contentType) : readJson(request.body);
    } catch {
      record(request, null);
      return reply.status(400).send(openAiError("The multipart body could not be parsed."));
    }
    const received: OpenAiVideosReceived = {
      kind: "openai-videos",
      encoding: multipart ? "multipart" : "json",
      model: read.fields.model,
      prompt: read.fields.prompt,
      seconds: read.fields.seconds,
      size: read.fields.size,
      reference: read.reference && !("error" in read.reference) ? read.reference : null,
    };
    record(request, received);
    const checked = checkCreate(read.fields, read.reference);
    if ("error" in checked) return reply.status(400).send(checked);
    return startVideo(reply, checked, null);
  });

  const live = (id: string): SimVideo | null => {
    const video = videos.get(id);
    return video && !forgotten(video, o(), Date.now()) ? video : null;
  };

  app.get<{ Params: { id: string } }>("/v1/videos/:id", async (request, reply) => {
    record(request, null);
    const video = live(request.params.id);
    if (!video) return notFound(reply, request.params.id);
    if (video.finishedAt === null) {
      if (video.pollErrors > 0) {
        video.pollErrors -= 1;
        return reply
          .status(500)
          .send(openAiError("The server had an error while processing your request.", "server_error"));
      }
      if (state.random() < (o().pollErrorRate ?? 0)) {
        return reply
          .status(500)
          .send(openAiError("The server had an error while processing your request.", "server_error"));
      }
    }
    advanceVideo(video, o(), Date.now());
    return videoObject(video, o());
  });

  await videoContentRoutes(app, { live, record, downloads });

  app.post<{ Params: { id: string } }>("/v1/videos/:id/remix", async (request, reply) => {
    const { fields } = readJson(request.body);
    record(request, { kind: "openai-videos", encoding: "json", remixOf: request.params.id, prompt: fields.prompt });
    const source = live(request.params.id);
    if (!source) return notFound(reply, request.params.id);
    const unknown = Object.keys(fields).find((name) => name !== "prompt");
    if (unknown)
      return reply
        .status(400)
        .send(openAiError(`Unknown parameter: '${unknown}'.`, undefined, unknown, "unknown_parameter"));
    const checked = checkCreate({ prompt: fields.prompt }, null);
    if ("error" in checked) return reply.status(400).send(checked);
    if (source.finishedAt === null || source.ends !== "completed") {
      return reply.status(400).send(openAiError(`Video ${source.id} must be completed before it can be remixed.`));
    }
    return startVideo(
      reply,
      { ...checked, model: source.model, seconds: source.seconds, size: source.size },
      source.id,
    );
  });

  app.get<{ Querystring: { after?: string; limit?: string; order?: string } }>("/v1/videos", async (request, reply) => {
    record(request, null);
    const { after, order = "desc" } = request.query;
    const limit = request.query.limit === undefined ? 20 : Number(request.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      return reply
        .status(400)
        .send(
          openAiError("limit must be an integer from 1 to 100.", "invalid_request_error", "limit", "invalid_value"),
        );
    }
    if (order !== "asc" && order !== "desc") {
      return reply
        .status(400)
        .send(
          openAiError(
            `Invalid value: '${order}'. Supported values are: 'asc' and 'desc'.`,
            undefined,
            "order",
            "invalid_value",
          ),
        );
    }
    const now = Date.now();
    const all = [...videos.values()].filter((v) => !forgotten(v, o(), now));
    if (order === "desc") all.reverse();
    const from = after === undefined ? 0 : all.findIndex((v) => v.id === after) + 1;
    const page = from === 0 && after !== undefined ? [] : all.slice(from, from + limit);
    return {
      object: "list",
      data: page.map((v) => videoObject(v, o())),
      first_id: page[0]?.id ?? null,
      last_id: page[page.length - 1]?.id ?? null,
      has_more: from + page.length < all.length,
    };
  });

  app.delete<{ Params: { id: string } }>("/v1/videos/:id", async (request, reply) => {
    record(request, null);
    const video = live(request.params.id);
    if (!video) return notFound(reply, request.params.id);
    if (video.finishedAt === null) {
      return reply
        .status(400)
        .send(openAiError(`Video ${video.id} is still being generated; it cannot be deleted yet.`));
    }
    videos.delete(video.id);
    return { id: video.id, object: "video.deleted", deleted: true };
  });
}
