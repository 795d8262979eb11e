import { FAMILY_SPECS } from "../families.js";
import type { TaskKind } from "../task-kind.js";
import { checkVideoBody, type VideoBody, VideoCreateSchema, VideoRemixSchema, videoSecondsOf } from "./video-body.js";

const asVideo = (body: unknown) => body as Partial<VideoBody>;
const modelOf = (body: unknown) => asVideo(body).model || FAMILY_SPECS.video.defaultModel;

/**
 * The video kinds: a new video (CREATE) and a remix of one of the caller's completed videos
 * (REMIX, with the source's model, length and size, on the channel that made the source). Both
 * cost the model's price per second (`task:video:<model>`) times the video's seconds; a model
 * without a price is unknown (a 400 naming `model`).
 */
export const VIDEO_KINDS: readonly TaskKind[] = ["CREATE", "REMIX"].map(
  (action): TaskKind => ({
    family: "video",
    action,
    schema: action === "CREATE" ? VideoCreateSchema : VideoRemixSchema,
    check: (body) => checkVideoBody(asVideo(body)),
    closedByDefault: false,
    originModel: (body) => modelOf(body),
    input: (body) => asVideo(body).prompt ?? "",
    upstreamOperation: action === "CREATE" ? "create" : "remix",
    results: "video",
    pricing: (body) => ({ name: modelOf(body), units: videoSecondsOf(asVideo(body)), field: "model" }),
    channelModel: (body) => modelOf(body),
  }),
);
