import {
  type AudiobTuning,
  type Clip,
  clipState,
  normalizeLyricSheet,
  normalizeRecordClip,
  normalizeRelayClip,
} from "./clips.js";
import { parseProgress, type TaskStatus } from "./states.js";
import type { KindResults } from "./task-kind.js";

/** What one poll learned about a task, in the gateway's words. */
export interface UpstreamTaskState {
  /** Normalized status; null for a word the gateway does not know (logged, task left as it is). */
  status: TaskStatus | null;
  /** The word the upstream used, kept for the logs and the store. */
  rawStatus: string;
  /** Percentage text when the upstream gave one. */
  progress: string | null;
  failReason: string;
  clips: Clip[];
}

// Every word is mapped explicitly; lower-case synonyms seen in the field are read too.
const RELAY_STATUS: Record<string, TaskStatus> = {
  NOT_START: "SUBMITTED",
  SUBMITTED: "SUBMITTED",
  QUEUED: "QUEUED",
  PENDING: "QUEUED",
  IN_PROGRESS: "IN_PROGRESS",
  RUNNING: "IN_PROGRESS",
  PROCESSING: "IN_PROGRESS",
  STREAMING: "IN_PROGRESS",
  SUCCESS: "SUCCESS",
  SUCCEEDED: "SUCCESS",
  COMPLETE: "SUCCESS",
  COMPLETED: "SUCCESS",
  FAILURE: "FAILURE",
  FAILED: "FAILURE",
  ERROR: "FAILURE",
};

/** Maps a `task-relay` task status word; null for an unknown word (including `UNKNOWN`). */
export function relayStatus(word: unknown): TaskStatus | null {
  if (typeof word !== "string") return null;
  return RELAY_STATUS[word.trim().toUpperCase()] ?? null;
}

const RECORD_STATUS: Record<string, { status: TaskStatus; progress: string }> = {
  PENDING: { status: "IN_PROGRESS", progress: "10%" },
  TEXT_SUCCESS: { status: "IN_PROGRESS", progress: "40%" },
  FIRST_SUCCESS: { status: "IN_PROGRESS", progress: "70%" },
  SUCCESS: { status: "SUCCESS", progress: "100%" },
  CREATE_TASK_FAILED: { status: "FAILURE", progress: "100%" },
  GENERATE_AUDIO_FAILED: { status: "FAILURE", progress: "100%" },
  CALLBACK_EXCEPTION: { status: "FAILURE", progress: "100%" },
  SENSITIVE_WORD_ERROR: { status: "FAILURE", progress: "100%" },
};

/** Maps a `generate-record` status word to a status and the progress it stands for. */
export function recordStatus(word: unknown): { status: TaskStatus; progress: string } | null {
  if (typeof word !== "string") return null;
  return RECORD_STATUS[word.trim().toUpperCase()] ?? null;
}

function reasonText(...values: unknown[]): string {
  for (const v of values) if (typeof v === "string" && v.trim() !== "") return v.trim().slice(0, 1000);
  return "";
}

/**
 * One item of a `task-relay` fetch answer, normalized. Null when it has no task id. The clips of a
 * kind whose results are lyric sheets are read as sheets (`title`, `text`).
 */
export function normalizeRelayTask(
  item: unknown,
  fallbackMs: number,
  results: KindResults = "audio",
): (UpstreamTaskState & { upstreamId: string }) | null {
  if (!item || typeof item !== "object") return null;
  const t = item as Record<string, any>;
  const upstreamId = t.task_id ?? t.id;
  if (typeof upstreamId !== "string" || upstreamId === "") return null;
  const status = relayStatus(t.status);
  // Clips are shown only once the task has succeeded, so they are read only then (polls of
  // running tasks are the bulk of the traffic). The relay puts them straight in `data`; a
  // chained gateway puts them in `data.clips`.
  const rawClips: unknown[] =
    status !== "SUCCESS" ? [] : Array.isArray(t.data) ? t.data : Array.isArray(t.data?.clips) ? t.data.clips : [];
  const clips: Clip[] = rawClips
    .map((c, i) =>
      results === "lyrics"
        ? normalizeLyricSheet(c, fallbackMs, `${upstreamId}-${i + 1}`)
        : normalizeRelayClip(c, fallbackMs, "completed"),
    )
    .filter((c): c is NonNullable<typeof c> => c !== null);
  for (const c of clips) if (c.state !== "error") c.state = clipState("complete", c.state);
  return {
    upstreamId,
    status,
    rawStatus: typeof t.status === "string" ? t.status : String(t.status ?? ""),
    progress: parseProgress(t.progress),
    failReason: reasonText(t.fail_reason, t.data?.fail_reason),
    clips,
  };
}

/** The `data` of a `generate-record` record-info answer, normalized. */
export function normalizeRecordInfo(data: unknown, tuning: AudiobTuning, fallbackMs: number): UpstreamTaskState {
  const d = (data && typeof data === "object" ? data : {}) as Record<string, any>;
  const mapped = recordStatus(d.status);
  const rawClips: unknown[] = Array.isArray(d.response?.sunoData)
    ? d.response.sunoData
    : Array.isArray(d.response?.data)
      ? d.response.data
      : [];
  const clips =
    mapped?.status === "SUCCESS"
      ? rawClips
          .map((c) => normalizeRecordClip(c, fallbackMs, tuning))
          .filter((c): c is NonNullable<typeof c> => c !== null)
      : [];
  return {
    status: mapped?.status ?? null,
    rawStatus: typeof d.status === "string" ? d.status : String(d.status ?? ""),
    progress: mapped?.progress ?? null,
    failReason: mapped?.status === "FAILURE" ? reasonText(d.errorMessage, d.errorCode, d.status) : "",
    clips,
  };
}
