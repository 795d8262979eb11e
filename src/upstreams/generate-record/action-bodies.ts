import type { CoverBody, ExtendBody, LayerBody } from "../../core/tasks/kinds/clip-edits.js";
import type { StemsBody } from "../../core/tasks/kinds/clip-exports.js";
import type { LyricsBody } from "../../core/tasks/kinds/new-material.js";
import type { OutgoingTask } from "../../core/tasks/ports.js";
import type { SourceClip } from "../../core/tasks/source-clip.js";
import { UpstreamError } from "../../core/upstream-error.js";

/**
 * The camelCase bodies of the provider routes of the further actions, from the client's
 * snake_case body and the source clip the gateway checked. Only the fields the protocol knows
 * are sent.
 */

type Body = Record<string, unknown>;

function withOptional(out: Body, fields: Record<string, unknown>): Body {
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) out[name] = value;
  return out;
}

function callback(out: Body, task: OutgoingTask): Body {
  if (task.callbackUrl !== null) out.callBackUrl = task.callbackUrl;
  return out;
}

function sourceOf(task: OutgoingTask): SourceClip {
  // The gateway checks the source before the task is accepted; a task without one cannot be sent.
  if (!task.source) throw new UpstreamError("refused", `${task.kind.action} needs a source clip`);
  return task.source;
}

/** The actions whose clips carry the provider's own clip ids (their `sunoData` ids). */
const UPSTREAM_CLIP_ACTIONS = new Set(["MUSIC", "EXTEND", "COVER", "ADD_INSTRUMENTAL", "ADD_VOCALS"]);

/**
 * Whether the provider knows the source clip by its id: a clip of one of its music tasks. An
 * upload exists only in the gateway, and a stem, WAV or video clip has an id the gateway made.
 */
export function upstreamMadeSource(task: OutgoingTask): boolean {
  const source = task.source;
  return !!source && UPSTREAM_CLIP_ACTIONS.has(source.action) && !!source.upstreamTaskId;
}

/** `POST /api/v1/lyrics`. */
export function lyricsBody(task: OutgoingTask): Body {
  return callback({ prompt: (task.body as LyricsBody).prompt }, task);
}

/**
 * `POST /api/v1/generate/extend` (a clip the upstream made) or `/generate/upload-extend` (any
 * other clip: an upload, a stem..., sent as the gateway's stored copy). `defaultParamFlag` is true when the client gave a prompt, tags or a title: the
 * upstream then uses them; otherwise it keeps the source's.
 */
export function extendBody(task: OutgoingTask): Body {
  const b = task.body as ExtendBody;
  const source = sourceOf(task);
  const custom = b.prompt !== undefined || b.tags !== undefined || b.title !== undefined;
  const out: Body = upstreamMadeSource(task)
    ? { audioId: source.clipId }
    : { uploadUrl: source.audioUrl, instrumental: false };
  Object.assign(out, { defaultParamFlag: custom, continueAt: b.continue_at, model: task.upstreamModel });
  return callback(withOptional(out, { prompt: b.prompt, style: b.tags, title: b.title }), task);
}

/**
 * `POST /api/v1/generate/upload-cover`: the source's audio (the gateway's stored copy) as
 * `uploadUrl`; custom mode when both tags and a title are given.
 */
export function coverBody(task: OutgoingTask): Body {
  const b = task.body as CoverBody;
  const out: Body = {
    uploadUrl: sourceOf(task).audioUrl,
    prompt: b.prompt ?? "",
    customMode: b.tags !== undefined && b.title !== undefined,
    instrumental: false,
    model: task.upstreamModel,
  };
  return callback(withOptional(out, { style: b.tags, title: b.title, audioWeight: b.cover_strength }), task);
}

/** `POST /api/v1/generate/add-instrumental`: instrumentals under the source's vocals. */
export function addInstrumentalBody(task: OutgoingTask): Body {
  const b = task.body as LayerBody;
  const out: Body = { uploadUrl: sourceOf(task).audioUrl, model: task.upstreamModel };
  return callback(withOptional(out, { prompt: b.prompt, title: b.title, tags: b.tags }), task);
}

/** `POST /api/v1/generate/add-vocals`: vocals over the source's instrumentals. */
export function addVocalsBody(task: OutgoingTask): Body {
  const b = task.body as LayerBody;
  const out: Body = { uploadUrl: sourceOf(task).audioUrl, prompt: b.prompt ?? "", model: task.upstreamModel };
  return callback(withOptional(out, { title: b.title, style: b.tags }), task);
}

/** The provider's id pair of a clip it made: its task's id and the clip's. */
function clipOfUpstream(task: OutgoingTask): Body {
  const source = sourceOf(task);
  if (!upstreamMadeSource(task)) {
    throw new UpstreamError(
      "refused",
      `${task.kind.action} works only on clips of music tasks (MUSIC, EXTEND, COVER, ADD_INSTRUMENTAL, ADD_VOCALS) on this upstream`,
    );
  }
  return { taskId: source.upstreamTaskId, audioId: source.clipId };
}

/** `POST /api/v1/vocal-removal/generate`: `separate_vocal` for kind vocals, `split_stem` for all. */
export function stemsBody(task: OutgoingTask): Body {
  const kind = (task.body as StemsBody).kind;
  return callback({ ...clipOfUpstream(task), type: kind === "all" ? "split_stem" : "separate_vocal" }, task);
}

/** `POST /api/v1/wav/generate` and `/api/v1/mp4/generate`. */
export function sourceClipBody(task: OutgoingTask): Body {
  return callback(clipOfUpstream(task), task);
}
