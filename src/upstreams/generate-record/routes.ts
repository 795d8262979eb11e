import type { AudiobTuning } from "../../core/tasks/clips.js";
import type { CoverBody } from "../../core/tasks/kinds/clip-edits.js";
import { type AudiobMusicBody, audiobTuning } from "../../core/tasks/kinds/music.js";
import type { OutgoingTask } from "../../core/tasks/ports.js";
import type { TaskBody } from "../../core/tasks/task-kind.js";
import {
  addInstrumentalBody,
  addVocalsBody,
  coverBody,
  extendBody,
  lyricsBody,
  sourceClipBody,
  stemsBody,
  upstreamMadeSource,
} from "./action-bodies.js";
import { recordRequestBody } from "./request.js";
import {
  type RecordReader,
  readLyricsRecord,
  readMusicRecord,
  readStemsRecord,
  readVideoRecord,
  readWavRecord,
} from "./results.js";

/** Where an action goes at the provider: its submit route and body, and the record-info that polls it. */
export interface RecordRoute {
  submitPath(task: OutgoingTask): string;
  body(task: OutgoingTask): Record<string, unknown>;
  pollPath: string;
  read: RecordReader;
  /** The request's tuning values, shown on the result clips. */
  tuning(body: TaskBody): AudiobTuning;
}

const MUSIC_RECORD = "/api/v1/generate/record-info";
const NO_TUNING: AudiobTuning = {
  negative_tags: null,
  style_weight: null,
  weirdness_constraint: null,
  audio_weight: null,
};
const noTuning = () => NO_TUNING;
const at = (path: string) => () => path;

/** Every action of family audiob this protocol can do (VOCALS_SWAP: the provider has no route). UPLOAD is done in the gateway (see index.ts). */
export const RECORD_ROUTES: Readonly<Record<string, RecordRoute>> = {
  MUSIC: {
    submitPath: at("/api/v1/generate"),
    body: (task) => recordRequestBody(task.body as AudiobMusicBody, task.upstreamModel, task.callbackUrl),
    pollPath: MUSIC_RECORD,
    read: readMusicRecord,
    tuning: (body) => audiobTuning(body as AudiobMusicBody),
  },
  LYRICS: {
    submitPath: at("/api/v1/lyrics"),
    body: lyricsBody,
    pollPath: "/api/v1/lyrics/record-info",
    read: readLyricsRecord,
    tuning: noTuning,
  },
  EXTEND: {
    submitPath: (task) => (upstreamMadeSource(task) ? "/api/v1/generate/extend" : "/api/v1/generate/upload-extend"),
    body: extendBody,
    pollPath: MUSIC_RECORD,
    read: readMusicRecord,
    tuning: noTuning,
  },
  COVER: {
    submitPath: at("/api/v1/generate/upload-cover"),
    body: coverBody,
    pollPath: MUSIC_RECORD,
    read: readMusicRecord,
    tuning: (body) => ({ ...NO_TUNING, audio_weight: (body as CoverBody).cover_strength ?? null }),
  },
  ADD_INSTRUMENTAL: {
    submitPath: at("/api/v1/generate/add-instrumental"),
    body: addInstrumentalBody,
    pollPath: MUSIC_RECORD,
    read: readMusicRecord,
    tuning: noTuning,
  },
  ADD_VOCALS: {
    submitPath: at("/api/v1/generate/add-vocals"),
    body: addVocalsBody,
    pollPath: MUSIC_RECORD,
    read: readMusicRecord,
    tuning: noTuning,
  },
  STEMS: {
    submitPath: at("/api/v1/vocal-removal/generate"),
    body: stemsBody,
    pollPath: "/api/v1/vocal-removal/record-info",
    read: readStemsRecord,
    tuning: noTuning,
  },
  WAV: {
    submitPath: at("/api/v1/wav/generate"),
    body: sourceClipBody,
    pollPath: "/api/v1/wav/record-info",
    read: readWavRecord,
    tuning: noTuning,
  },
  MUSIC_VIDEO: {
    submitPath: at("/api/v1/mp4/generate"),
    body: sourceClipBody,
    pollPath: "/api/v1/mp4/record-info",
    read: readVideoRecord,
    tuning: noTuning,
  },
};
