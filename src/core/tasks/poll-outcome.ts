import { type Clip, carriesResult } from "./clips.js";
import type { TaskChanges } from "./ports.js";
import { nextPollAt, nextPollDelay, type PollTiming, taskDeadlineMs } from "./schedule.js";
import { canMove, type TaskStatus } from "./states.js";
import type { UpstreamTaskState } from "./upstream-state.js";

/** What one poll of a task brought back. */
export type PollReport =
  | { kind: "state"; state: UpstreamTaskState }
  /** The poll failed (network, upstream error), or the upstream does not know the task. */
  | { kind: "error"; reason: string };

/** The task as the decision needs it. */
export interface PolledRecord {
  status: string;
  progress: string;
  start_time: number;
  submit_time: number;
  upstream_status: string | null;
  poll_errors: number;
  /** JSON text holding `origin_model_name`. */
  properties: string;
}

/** When the decision is taken, and the task timings that apply. */
export interface PollClock {
  nowMs: number;
  timeoutSeconds: number;
  timing: PollTiming;
}

/** What to do with the task; every move is a compare-and-set from the polled status. */
export type Transition =
  | { kind: "succeed"; clips: Clip[]; upstreamStatus: string; model: string }
  | { kind: "fail"; reason: string; upstreamStatus?: string; timedOut: boolean }
  /** A non-terminal move (or progress, or a new unknown status word), releasing the lease. */
  | { kind: "advance"; to: TaskStatus; changes: TaskChanges; unknownWord?: string }
  /** Nothing changed: the lease is released and the task looked at again at `nextPollAt`. */
  | { kind: "release"; nextPollAt: number }
  /** The poll failed: the lease is released with one more error counted, for the backoff. */
  | { kind: "back-off"; nextPollAt: number; reason: string };

function percent(progress: string): number {
  const n = Number.parseInt(progress, 10);
  return Number.isFinite(n) ? n : 0;
}

function originModel(properties: string): string {
  try {
    const v = JSON.parse(properties);
    return typeof v?.origin_model_name === "string" ? v.origin_model_name : "";
  } catch {
    return "";
  }
}

/** What a success without a result lacks, in words. */
function resultWord(first: Clip | undefined): string {
  if (first && "text" in first) return "lyric sheet";
  return first && "spritesheet_url" in first ? "video" : "audio";
}

function timedOut(clock: PollClock): Transition {
  return { kind: "fail", reason: `the task did not finish within ${clock.timeoutSeconds} seconds`, timedOut: true };
}

/**
 * Decides what a poll means for a running task. An upstream success without a result (audio, video or lyric sheet) is a failure;
 * an unknown status word leaves the task as it is (stored once, when it first appears); a task
 * never goes back and its progress never drops; past its deadline a task that has not ended
 * fails; a failed poll backs off, doubling per failure in a row.
 */
export function pollOutcome(record: PolledRecord, report: PollReport, clock: PollClock): Transition {
  const now = clock.nowMs;
  const deadline = taskDeadlineMs(Number(record.submit_time), clock.timeoutSeconds);
  if (report.kind === "error") {
    if (now >= deadline) return timedOut(clock);
    const delay = nextPollDelay(Number(record.poll_errors) + 1, clock.timing);
    return { kind: "back-off", nextPollAt: nextPollAt(now, delay, deadline), reason: report.reason };
  }
  const { state } = report;
  const from = record.status as TaskStatus;
  const nextPoll = nextPollAt(now, nextPollDelay(0, clock.timing), deadline);
  if (state.status === "SUCCESS") {
    const first = state.clips[0];
    if (!carriesResult(first)) {
      return {
        kind: "fail",
        reason: `the upstream reported success without any ${resultWord(first)}`,
        upstreamStatus: state.rawStatus,
        timedOut: false,
      };
    }
    return {
      kind: "succeed",
      clips: state.clips,
      upstreamStatus: state.rawStatus,
      model: originModel(record.properties),
    };
  }
  if (state.status === "FAILURE") {
    return {
      kind: "fail",
      reason: state.failReason || "the upstream reported that the task failed",
      upstreamStatus: state.rawStatus,
      timedOut: false,
    };
  }
  if (state.status === null && state.rawStatus !== record.upstream_status && now < deadline) {
    return {
      kind: "advance",
      to: from,
      changes: { upstreamStatus: state.rawStatus, nextPollAt: nextPoll },
      unknownWord: state.rawStatus,
    };
  }
  if (now >= deadline) return timedOut(clock);
  const target = state.status !== null && canMove(from, state.status) ? state.status : from;
  // Progress shows while running and never goes back.
  const progress =
    target === "IN_PROGRESS" && state.progress !== null && percent(state.progress) > percent(record.progress)
      ? state.progress
      : record.progress;
  if (target === from && progress === record.progress) return { kind: "release", nextPollAt: nextPoll };
  return {
    kind: "advance",
    to: target,
    changes: {
      progress,
      upstreamStatus: state.rawStatus,
      startTime: target === "IN_PROGRESS" && Number(record.start_time) === 0 ? Math.floor(now / 1000) : undefined,
      nextPollAt: nextPoll,
    },
  };
}
