import { lyricSheet } from "./media.js";
import { simMediaUrl } from "./media-files.js";
import type { SimulatorState } from "./state.js";
import { type SimTask, simPhase } from "./task-relay.js";

/** The provider routes of the simulated `generate-record` upstream, each with its own record-info. */
export type RecordRoute = "generate" | "lyrics" | "vocal-removal" | "wav" | "mp4";

export interface RecordTask extends SimTask {
  route: RecordRoute;
  callbackUrl: string | null;
  /** Callback stages already sent (0 none, 1 text, 2 first, 3 complete or error). */
  callbacksSent: number;
  durations: number[];
  /** vocal-removal: `separate_vocal` or `split_stem`. */
  stemType?: string;
  /** The source clip of a vocal-removal, wav or mp4 task. */
  sourceClipId?: string;
}

const TEXT_AT = 0.3;
const FIRST_AT = 0.6;

/** The word each route uses for a failed task. */
const FAILED_WORD: Record<RecordRoute, string> = {
  generate: "GENERATE_AUDIO_FAILED",
  lyrics: "GENERATE_LYRICS_FAILED",
  "vocal-removal": "GENERATE_AUDIO_FAILED",
  wav: "GENERATE_WAV_FAILED",
  mp4: "GENERATE_MP4_FAILED",
};

/** The task's status word at `now`; the music routes pass through TEXT_SUCCESS and FIRST_SUCCESS. */
export function statusWord(task: RecordTask, now: number): string {
  const { phase, fraction } = simPhase(task, now, 0);
  if (phase === "done") return task.fails ? FAILED_WORD[task.route] : "SUCCESS";
  if (task.route !== "generate") return "PENDING";
  if (fraction >= FIRST_AT) return "FIRST_SUCCESS";
  if (fraction >= TEXT_AT) return "TEXT_SUCCESS";
  return "PENDING";
}

export function isFailedWord(word: string): boolean {
  return word.endsWith("_FAILED");
}

/** Callback stage of a status word (0 none, 1 text, 2 first, 3 the end). */
export function stageOf(word: string): number {
  if (word === "TEXT_SUCCESS") return 1;
  if (word === "FIRST_SUCCESS") return 2;
  if (word === "SUCCESS" || isFailedWord(word)) return 3;
  return 0;
}

function createTime(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ").slice(0, 19);
}

/** `response.sunoData` of a music task: its clips, the first ready at FIRST_SUCCESS. */
export function sunoData(state: SimulatorState, task: RecordTask, word: string) {
  const stage = stageOf(word);
  if (stage === 0 || isFailedWord(word)) return [];
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

/** `response.data` of a lyrics task: one lyric sheet per variant. */
export function lyricsData(task: RecordTask, word: string) {
  if (word !== "SUCCESS") return [];
  return task.clipIds.map((_id, i) => ({ ...lyricSheet(task.prompt, i), status: "complete", errorMessage: "" }));
}

const SEPARATE_VOCAL = ["vocalUrl", "instrumentalUrl"];
const SPLIT_STEM = [
  "vocalUrl",
  "backingVocalsUrl",
  "drumsUrl",
  "bassUrl",
  "guitarUrl",
  "keyboardUrl",
  "percussionUrl",
  "stringsUrl",
  "synthUrl",
  "fxUrl",
  "brassUrl",
  "woodwindsUrl",
];

/** `response` of a vocal-removal task: one URL per stem, and the source's. */
export function stemsResponse(state: SimulatorState, task: RecordTask, word: string) {
  if (word !== "SUCCESS") return null;
  const out: Record<string, string | null> = {
    originUrl: simMediaUrl(state, task.sourceClipId ?? task.id, "mp3"),
  };
  for (const field of task.stemType === "split_stem" ? SPLIT_STEM : SEPARATE_VOCAL) {
    out[field] = simMediaUrl(state, `${task.id}-${field.replace(/Url$/, "")}`, "mp3");
  }
  return out;
}

/** The `data` of a record-info answer of the non-music routes (`successFlag` as the status). */
export function subRecordData(state: SimulatorState, task: RecordTask, word: string) {
  const failed = isFailedWord(word);
  const base = {
    taskId: task.id,
    musicId: task.sourceClipId ?? null,
    callbackUrl: task.callbackUrl,
    createTime: createTime(task.createdAt),
    completeTime: word === "SUCCESS" ? createTime(task.createdAt + task.completeAfterMs) : null,
    errorCode: failed ? 501 : null,
    errorMessage: failed ? "simulated failure" : null,
  };
  if (task.route === "lyrics") {
    return {
      ...base,
      type: "LYRICS",
      status: word,
      param: JSON.stringify({ prompt: task.prompt }),
      response: { taskId: task.id, data: lyricsData(task, word) },
    };
  }
  const response =
    word !== "SUCCESS"
      ? null
      : task.route === "wav"
        ? { audioWavUrl: simMediaUrl(state, `${task.id}`, "wav") }
        : task.route === "mp4"
          ? { videoUrl: simMediaUrl(state, `${task.id}`, "mp4") }
          : stemsResponse(state, task, word);
  return { ...base, successFlag: word, response };
}
