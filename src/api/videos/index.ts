import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { assertModelAllowed } from "../../auth/authenticator.js";
import { VideoIdParams, VideoListQuery, VideoListSchema, VideoObjectSchema } from "../../contracts/videos.js";
import { GatewayError } from "../../core/errors.js";
import { FAMILY_SPECS } from "../../core/tasks/families.js";
import {
  checkVideoBody,
  DEFAULT_VIDEO_SECONDS,
  DEFAULT_VIDEO_SIZE,
  type VideoBody,
} from "../../core/tasks/kinds/video-body.js";
import { findKind, type TaskKind } from "../../core/tasks/kinds.js";
import type { TaskAttachment, TaskIntake } from "../../core/tasks/ports.js";
import { submitTask } from "../../core/tasks/submit.js";
import type { TaskBody } from "../../core/tasks/task-kind.js";
import { deleteVideo } from "../../core/videos/delete-video.js";
import { videoListPage } from "../../core/videos/list-page.js";
import { renderVideo } from "../../core/videos/video-object.js";
import { installInputBounds } from "../../http/input-bounds.js";
import { installSurface } from "../../http/surfaces.js";
import { principalOf } from "../auth-hook.js";
import { answerIdempotently, IdempotencyHeaders } from "../idempotent-route.js";
import { errorShapeOf } from "../route-table.js";
import { videoContentRoute } from "./content.js";
import { deletedCharge } from "./deleted-charge.js";
import { acceptMultipart } from "./multipart.js";
import { ownedVideo } from "./owned-video.js";
import type { VideoSurfaceDeps } from "./ports.js";
import { describedReference, givenReference, referenceIntake } from "./reference.js";
import { VideoCreateBody, VideoDeletedSchema, VideoRemixBody } from "./schemas.js";

function kind(action: string): TaskKind {
  const k = findKind("video", action);
  if (!k) throw new Error(`the registry has no video:${action}`);
  return k;
}

/**
 * Submits a video task through the task engine (charged, then sent after the answer) and answers
 * its video object; an Idempotency-Key replays the first answer.
 */
async function submitVideo(
  deps: VideoSurfaceDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  videoKind: TaskKind,
  body: VideoBody,
  extra: {
    attachment?: TaskAttachment | null;
    intake?: TaskIntake | null;
    continues?: { channelId: number; upstreamId: string };
  },
) {
  const principal = principalOf(request);
  assertModelAllowed(principal, body.model);
  let send: (() => Promise<void>) | null = null;
  const answered = await answerIdempotently(deps.idempotency, request, reply, async (run) => {
    const caller = { userId: principal.userId, tokenId: principal.tokenId, group: principal.group };
    const submitted = await submitTask(deps.submit, {
      kind: videoKind,
      body: body as unknown as TaskBody,
      caller,
      run,
      attachment: extra.attachment ?? null,
      intake: extra.intake ?? null,
      continues: extra.continues ?? null,
    });
    send = submitted.send;
    const row = await deps.videos.get(principal.userId, submitted.taskId);
    if (!row) throw new GatewayError("GW_ERR_INTERNAL", "The video was stored but cannot be read back.");
    return { status: 200, body: renderVideo(row, deps.retentionSeconds) };
  });
  const pending = send as (() => Promise<void>) | null;
  if (pending) await pending().catch((err) => deps.log.warn({ err }, "sending a video after its answer failed"));
  return answered;
}

/** The OpenAI Videos API under /v1/videos (OpenAI error shape), over the task engine. */
export async function videoRoutes(app: FastifyInstance, opts: { deps: VideoSurfaceDeps }) {
  const { deps } = opts;
  installSurface(app, errorShapeOf(app.prefix));
  installInputBounds(app, deps.bodies);
  acceptMultipart(app, deps.bodies.maxBytes);
  app.addHook("onRequest", deps.authenticate);
  app.addHook("onClose", async () => deps.close());

  app.post(
    "",
    {
      schema: {
        summary: "Create a video (JSON, or multipart with an input_reference image file)",
        body: VideoCreateBody,
        headers: IdempotencyHeaders,
        response: { 200: VideoObjectSchema },
      },
    },
    async (request, reply) => {
      const raw = request.body as Record<string, unknown>;
      const body: VideoBody = {
        prompt: String(raw.prompt ?? ""),
        model: typeof raw.model === "string" && raw.model !== "" ? raw.model : FAMILY_SPECS.video.defaultModel,
        seconds: typeof raw.seconds === "string" ? raw.seconds : DEFAULT_VIDEO_SECONDS,
        size: typeof raw.size === "string" ? raw.size : DEFAULT_VIDEO_SIZE,
      };
      checkVideoBody(body);
      // A file of the form is checked here; a URL is fetched only once the video's hold is taken.
      const reference = givenReference(raw.input_reference, deps.reference.maxBytes);
      if (reference?.kind === "file") {
        const described = describedReference(body, "file", reference.attachment);
        return submitVideo(deps, request, reply, kind("CREATE"), described, { attachment: reference.attachment });
      }
      const intake = reference ? referenceIntake(reference.url, deps.reference) : null;
      return submitVideo(deps, request, reply, kind("CREATE"), body, { intake });
    },
  );

  app.post(
    "/:video_id/remix",
    {
      schema: {
        summary: "Remix a completed video with a new prompt",
        params: VideoIdParams,
        body: VideoRemixBody,
        headers: IdempotencyHeaders,
        response: { 200: VideoObjectSchema },
      },
    },
    async (request, reply) => {
      const source = await ownedVideo(deps, request);
      if (source.status !== "SUCCESS" || !source.upstream_id) {
        throw new GatewayError(
          "GW_ERR_VALIDATION",
          `Only a completed video can be remixed; ${source.task_id} is not.`,
          {
            param: "video_id",
          },
        );
      }
      const from = renderVideo(source, deps.retentionSeconds);
      const body: VideoBody = {
        prompt: String((request.body as { prompt?: unknown }).prompt ?? ""),
        model: from.model,
        seconds: from.seconds,
        size: from.size,
        remixed_from_video_id: source.task_id,
      };
      checkVideoBody(body);
      const continues = { channelId: Number(source.channel_id), upstreamId: source.upstream_id };
      return submitVideo(deps, request, reply, kind("REMIX"), body, { continues });
    },
  );

  app.get(
    "/:video_id",
    { schema: { summary: "Retrieve a video", params: VideoIdParams, response: { 200: VideoObjectSchema } } },
    async (request) => renderVideo(await ownedVideo(deps, request), deps.retentionSeconds),
  );

  app.get(
    "",
    { schema: { summary: "List your videos", querystring: VideoListQuery, response: { 200: VideoListSchema } } },
    async (request) =>
      videoListPage(
        deps.videos,
        principalOf(request).userId,
        request.query as { after?: string; limit?: string; order?: "asc" | "desc" },
        deps.retentionSeconds,
      ),
  );

  app.delete(
    "/:video_id",
    {
      schema: {
        summary: "Delete a video and its stored content",
        description:
          "A video still being made cannot be cancelled upstream: it is hidden at once, and its charge stays " +
          "open until the upstream job ends (settled if it completes, refunded if it fails); `charge` says so.",
        params: VideoIdParams,
        response: { 200: VideoDeletedSchema },
      },
    },
    async (request) => {
      const row = await ownedVideo(deps, request);
      const state = await deleteVideo(
        {
          reread: (id) => deps.videos.byId(id),
          markDeleted: (id) => deps.videos.markDeleted(id),
          deleteBlob: (key) => deps.files.delete(key),
          markFilesRemoved: (id) => deps.videos.markFilesRemoved(id),
        },
        row,
      );
      return { id: row.task_id, object: "video.deleted", deleted: true, charge: deletedCharge(state, row.quota) };
    },
  );

  await app.register(videoContentRoute, { deps });
}
