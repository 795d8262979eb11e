import {
  type AudiobClip,
  type AudiobTuning,
  isoTimestamp,
  type LyricSheetClip,
  normalizeLyricSheet,
} from "../../core/tasks/clips.js";
import { normalizeRecordInfo, type UpstreamTaskState } from "../../core/tasks/upstream-state.js";
import { derivedClipId } from "./derived-id.js";
import { recordWordStatus } from "./status.js";

/** Reads the `data` of one route's record-info answer. */
export type RecordReader = (data: Record<string, any>, read: ReadContext) => UpstreamTaskState;

export interface ReadContext {
  upstreamId: string;
  tuning: AudiobTuning;
  nowMs: number;
}

const NO_TUNING: AudiobTuning = {
  negative_tags: null,
  style_weight: null,
  weirdness_constraint: null,
  audio_weight: null,
};

function reasonText(...values: unknown[]): string {
  for (const v of values) {
    if (typeof v === "string" && v.trim() !== "") return v.trim().slice(0, 1000);
    if (typeof v === "number") return String(v);
  }
  return "";
}

/** The status of a record's `data` (`status` or `successFlag`), its progress and fail reason. */
function stateOf(d: Record<string, any>): Omit<UpstreamTaskState, "clips"> {
  const word = d.status ?? d.successFlag;
  const mapped = recordWordStatus(word);
  return {
    status: mapped?.status ?? null,
    rawStatus: typeof word === "string" ? word : String(word ?? ""),
    progress: mapped?.progress ?? null,
    failReason: mapped?.status === "FAILURE" ? reasonText(d.errorMessage, d.errorCode, word) : "",
  };
}

/** `generate/record-info` (MUSIC, EXTEND, COVER, ADD_*): the `sunoData` clips. */
export const readMusicRecord: RecordReader = (data, read) => {
  const state = normalizeRecordInfo(data, read.tuning, read.nowMs);
  // Failure words the music route does not list are still failures.
  return state.status === null ? { ...state, ...stateOf(data), clips: [] } : state;
};

/** `lyrics/record-info`: `response.data` is the lyric sheets. */
export const readLyricsRecord: RecordReader = (data, read) => {
  const state = stateOf(data);
  const raw: unknown[] = Array.isArray(data.response?.data) ? data.response.data : [];
  const clips =
    state.status === "SUCCESS"
      ? raw
          .filter((s) => !(s && typeof s === "object" && /fail|error/i.test(String((s as any).status ?? ""))))
          .map((s, i) => normalizeLyricSheet(s, read.nowMs, derivedClipId(read.upstreamId, `lyrics-${i}`)))
          .filter((c): c is LyricSheetClip => c !== null)
      : [];
  return { ...state, clips };
};

function resultClip(
  read: ReadContext,
  name: string,
  title: string,
  urls: { audio: string; video?: string },
): AudiobClip {
  return {
    clip_id: derivedClipId(read.upstreamId, name),
    state: "completed",
    title,
    tags: "",
    lyrics: "",
    image_url: "",
    audio_url: urls.audio,
    video_url: urls.video ?? null,
    created_at: isoTimestamp(null, read.nowMs),
    duration: 0,
    ...NO_TUNING,
  };
}

function url(value: unknown): string {
  return typeof value === "string" && /^https?:\/\//i.test(value) ? value : "";
}

/** The stems a vocal-removal answer may carry, in the order they are shown, and their titles. */
const STEM_FIELDS: [string, string][] = [
  ["vocalUrl", "vocals"],
  ["instrumentalUrl", "instrumental"],
  ["backingVocalsUrl", "backing_vocals"],
  ["drumsUrl", "drums"],
  ["bassUrl", "bass"],
  ["guitarUrl", "guitar"],
  ["keyboardUrl", "keyboard"],
  ["pianoUrl", "piano"],
  ["percussionUrl", "percussion"],
  ["stringsUrl", "strings"],
  ["synthUrl", "synth"],
  ["fxUrl", "fx"],
  ["brassUrl", "brass"],
  ["woodwindsUrl", "woodwinds"],
  ["otherUrl", "other"],
];
const NOT_A_STEM = new Set(["originUrl", "originalUrl", "sourceUrl", "imageUrl", "streamUrl"]);

function snakeStem(field: string): string {
  return field
    .replace(/Url$/, "")
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase();
}

/** `vocal-removal/record-info`: one clip per stem URL in `response`, titled by the stem. */
export const readStemsRecord: RecordReader = (data, read) => {
  const state = stateOf(data);
  if (state.status !== "SUCCESS") return { ...state, clips: [] };
  const response: Record<string, unknown> = data.response && typeof data.response === "object" ? data.response : {};
  const known = new Set(STEM_FIELDS.map(([field]) => field));
  // Stems this reader does not list yet are kept too, named from their field.
  const extra = Object.keys(response)
    .filter((f) => f.endsWith("Url") && !known.has(f) && !NOT_A_STEM.has(f))
    .map((f): [string, string] => [f, snakeStem(f)]);
  const clips = [...STEM_FIELDS, ...extra]
    .filter(([field]) => url(response[field]) !== "")
    .map(([field, stem]) => resultClip(read, stem, stem, { audio: url(response[field]) }));
  return { ...state, clips };
};

/** `wav/record-info`: `response.audioWavUrl` as the clip's audio. */
export const readWavRecord: RecordReader = (data, read) => {
  const state = stateOf(data);
  const wav = url(data.response?.audioWavUrl ?? data.response?.audio_wav_url ?? data.response?.wavUrl);
  const clips = state.status === "SUCCESS" && wav !== "" ? [resultClip(read, "wav", "wav", { audio: wav })] : [];
  return { ...state, clips };
};

/** `mp4/record-info`: `response.videoUrl` as the clip's video. */
export const readVideoRecord: RecordReader = (data, read) => {
  const state = stateOf(data);
  const video = url(data.response?.videoUrl ?? data.response?.video_url ?? data.response?.mp4Url);
  const clips =
    state.status === "SUCCESS" && video !== "" ? [resultClip(read, "video", "video", { audio: "", video })] : [];
  return { ...state, clips };
};
