/** The clip shapes of the two families (sections 2.3 and 2.4 of the interface document). */

export interface AudioaClip {
  clip_id: string;
  state: string;
  title: string;
  /** Style description. */
  sound: string;
  lyrics: string;
  image_url: string;
  audio_url: string;
  video_url: string | null;
  /** ISO 8601 with fractional seconds. */
  created_at: string;
  /** Model version label. */
  mv: string;
  seed: string | number | null;
  duration: number | null;
}

export interface AudiobClip {
  clip_id: string;
  state: string;
  title: string;
  /** Comma-separated. */
  tags: string;
  lyrics: string;
  image_url: string;
  audio_url: string;
  video_url: string | null;
  created_at: string;
  duration: number;
  negative_tags: string | null;
  style_weight: number | null;
  weirdness_constraint: number | null;
  audio_weight: number | null;
}

/** A LYRICS result (both families): a lyric sheet, no audio. */
export interface LyricSheetClip {
  clip_id: string;
  state: string;
  title: string;
  /** The lyrics, with section markers in square brackets ([Verse], [Chorus]...). */
  text: string;
  audio_url: null;
  created_at: string;
}

/** A video task's result: the video, its thumbnail and its spritesheet (as the gateway stores them). */
export interface VideoClip {
  clip_id: string;
  state: string;
  title: string;
  /** A video has no separate audio file. */
  audio_url: null;
  video_url: string;
  /** The thumbnail. */
  image_url: string;
  spritesheet_url: string;
  created_at: string;
}

export type Clip = AudioaClip | AudiobClip | LyricSheetClip | VideoClip;

/** Whether a clip carries a result: audio, a video or a lyric sheet's text. */
export function carriesResult(clip: Clip | undefined): boolean {
  if (!clip) return false;
  if ("text" in clip) return clip.text.trim() !== "";
  return (clip.audio_url ?? "") !== "" || (clip.video_url ?? "") !== "";
}

const CLIP_STATES: Record<string, string> = {
  complete: "completed",
  completed: "completed",
  succeeded: "completed",
  success: "completed",
  streaming: "streaming",
  submitted: "submitted",
  queued: "queued",
  pending: "queued",
  error: "error",
  failed: "error",
};

/** The record's `result_url`: the first clip's audio, else its video (a music video), else "" (lyrics). */
export function resultUrlOf(clip: Clip | undefined): string {
  if (!clip || "text" in clip) return "";
  if (clip.audio_url) return clip.audio_url;
  return clip.video_url ?? "";
}

/** Maps an upstream clip status word to the clip `state` the gateway shows. */
export function clipState(word: unknown, fallback: string): string {
  if (typeof word !== "string") return fallback;
  return CLIP_STATES[word.trim().toLowerCase()] ?? fallback;
}

/**
 * An ISO 8601 timestamp with milliseconds from what upstreams send: ISO text, `YYYY-MM-DD HH:MM:SS`
 * (read as UTC), Unix seconds or milliseconds. Anything unreadable becomes `fallbackMs`.
 */
export function isoTimestamp(value: unknown, fallbackMs: number): string {
  let ms: number | null = null;
  if (typeof value === "number" && Number.isFinite(value) && value > 0) {
    ms = value < 1e11 ? value * 1000 : value;
  } else if (typeof value === "string" && value.trim() !== "") {
    let text = value.trim();
    if (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}/.test(text)) text = text.replace(" ", "T");
    if (/T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text)) text += "Z";
    const parsed = Date.parse(text);
    if (Number.isFinite(parsed)) ms = parsed;
  }
  return new Date(ms ?? fallbackMs).toISOString();
}

function text(value: unknown): string {
  return typeof value === "string" ? value : value === null || value === undefined ? "" : String(value);
}

function optionalNumber(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) return Number(value);
  return null;
}

function optionalUrl(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

/**
 * A `task-relay` clip in the audioa shape. Reads the relay's raw clip (`id`, `metadata.tags`...)
 * and also an already normalized clip (`clip_id`, `sound`...), so gateways can be chained.
 */
export function normalizeRelayClip(raw: unknown, fallbackMs: number, fallbackState = "completed"): AudioaClip | null {
  if (!raw || typeof raw !== "object") return null;
  const c = raw as Record<string, any>;
  const meta = c.metadata && typeof c.metadata === "object" ? (c.metadata as Record<string, unknown>) : {};
  const id = c.id ?? c.clip_id;
  if (typeof id !== "string" || id === "") return null;
  const seed = c.seed ?? meta.seed ?? null;
  return {
    clip_id: id,
    state: clipState(c.status ?? c.state, fallbackState),
    title: text(c.title),
    sound: text(meta.tags ?? c.sound ?? c.tags),
    lyrics: text(meta.prompt ?? c.lyrics ?? c.prompt),
    image_url: text(c.image_url),
    audio_url: text(c.audio_url),
    video_url: optionalUrl(c.video_url),
    created_at: isoTimestamp(c.created_at, fallbackMs),
    mv: text(c.model_name ?? c.mv ?? c.major_model_version),
    seed: typeof seed === "string" || typeof seed === "number" ? seed : null,
    duration: optionalNumber(meta.duration ?? c.duration),
  };
}

/** The request's tuning values, shown on audiob clips when the upstream does not echo them. */
export interface AudiobTuning {
  negative_tags: string | null;
  style_weight: number | null;
  weirdness_constraint: number | null;
  audio_weight: number | null;
}

/** A `generate-record` clip (`sunoData[]` item or callback clip) in the audiob shape. */
export function normalizeRecordClip(
  raw: unknown,
  fallbackMs: number,
  tuning: AudiobTuning,
  state = "completed",
): AudiobClip | null {
  if (!raw || typeof raw !== "object") return null;
  const c = raw as Record<string, any>;
  const id = c.id ?? c.clip_id;
  if (typeof id !== "string" || id === "") return null;
  const negative = c.negativeTags ?? c.negative_tags;
  return {
    clip_id: id,
    state,
    title: text(c.title),
    tags: text(c.tags),
    lyrics: text(c.prompt ?? c.lyrics),
    image_url: text(c.imageUrl ?? c.image_url ?? c.sourceImageUrl),
    audio_url: text(c.audioUrl ?? c.audio_url ?? c.sourceAudioUrl),
    video_url: optionalUrl(c.videoUrl ?? c.video_url),
    created_at: isoTimestamp(c.createTime ?? c.created_at, fallbackMs),
    duration: optionalNumber(c.duration) ?? 0,
    negative_tags: typeof negative === "string" && negative !== "" ? negative : tuning.negative_tags,
    style_weight: optionalNumber(c.styleWeight ?? c.style_weight) ?? tuning.style_weight,
    weirdness_constraint:
      optionalNumber(c.weirdnessConstraint ?? c.weirdness_constraint) ?? tuning.weirdness_constraint,
    audio_weight: optionalNumber(c.audioWeight ?? c.audio_weight) ?? tuning.audio_weight,
  };
}

/**
 * A lyric sheet in the gateway's shape, from `{id?, title, text, status?}` (either protocol;
 * a chained gateway's sheet reads the same). Sheets without an id get `<taskId>-<index>`.
 */
export function normalizeLyricSheet(raw: unknown, fallbackMs: number, fallbackId: string): LyricSheetClip | null {
  if (!raw || typeof raw !== "object") return null;
  const c = raw as Record<string, any>;
  const body = c.text ?? c.lyrics ?? c.prompt;
  if (typeof body !== "string") return null;
  const id = c.id ?? c.clip_id;
  return {
    clip_id: typeof id === "string" && id !== "" ? id : fallbackId,
    state: clipState(c.status ?? c.state, "completed"),
    title: text(c.title),
    text: body,
    audio_url: null,
    created_at: isoTimestamp(c.created_at ?? c.createTime, fallbackMs),
  };
}
