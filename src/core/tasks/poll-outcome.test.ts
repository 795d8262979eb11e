import { describe, expect, it } from "vitest";
import type { AudioaClip } from "./clips.js";
import { type PolledRecord, type PollReport, pollOutcome } from "./poll-outcome.js";
import { POLLED_STATUSES, type TaskStatus } from "./states.js";
import type { UpstreamTaskState } from "./upstream-state.js";

const SUBMIT_TIME = 1_000;
const TIMEOUT_S = 600;
const DEADLINE_MS = (SUBMIT_TIME + TIMEOUT_S) * 1000;
const BEFORE = DEADLINE_MS - 60_000;
const AFTER = DEADLINE_MS + 1;
const TIMING = { pollIntervalMs: 1_000, maxPollIntervalMs: 16_000 };

function record(status: TaskStatus, over: Partial<PolledRecord> = {}): PolledRecord {
  return {
    status,
    progress: "0%",
    start_time: 0,
    submit_time: SUBMIT_TIME,
    upstream_status: null,
    poll_errors: 0,
    properties: JSON.stringify({ origin_model_name: "chirp-v3-5" }),
    ...over,
  };
}

const clip: AudioaClip = {
  clip_id: "c1",
  state: "completed",
  title: "",
  sound: "",
  lyrics: "",
  image_url: "",
  audio_url: "https://cdn.example/c1.mp3",
  video_url: null,
  created_at: "2026-01-01T00:00:00.000Z",
  mv: "chirp-v3-5",
  seed: null,
  duration: 10,
};

function state(status: TaskStatus | null, over: Partial<UpstreamTaskState> = {}): PollReport {
  return {
    kind: "state",
    state: { status, rawStatus: status ?? "WEIRD", progress: null, failReason: "", clips: [], ...over },
  };
}

const at = (nowMs: number) => ({ nowMs, timeoutSeconds: TIMEOUT_S, timing: TIMING });
const RUNNING: TaskStatus[] = ["SUBMITTED", "QUEUED", "IN_PROGRESS"];
const ORDER: Record<string, number> = { SUBMITTED: 1, QUEUED: 2, IN_PROGRESS: 3 };

describe("pollOutcome", () => {
  it("covers every polled status", () => {
    expect([...POLLED_STATUSES]).toEqual(RUNNING);
  });

  for (const from of RUNNING) {
    describe(`from ${from}`, () => {
      it("succeeds with the clips and the origin model when the upstream reports audio", () => {
        expect(pollOutcome(record(from), state("SUCCESS", { clips: [clip] }), at(BEFORE))).toEqual({
          kind: "succeed",
          clips: [clip],
          upstreamStatus: "SUCCESS",
          model: "chirp-v3-5",
        });
      });

      it("fails a success without audio, even past the deadline", () => {
        for (const now of [BEFORE, AFTER]) {
          for (const clips of [[], [{ ...clip, audio_url: "" }]]) {
            expect(pollOutcome(record(from), state("SUCCESS", { clips }), at(now))).toMatchObject({
              kind: "fail",
              reason: "the upstream reported success without any audio",
              timedOut: false,
            });
          }
        }
      });

      it("fails with the upstream's reason, or a default one", () => {
        expect(pollOutcome(record(from), state("FAILURE", { failReason: "bad words" }), at(BEFORE))).toEqual({
          kind: "fail",
          reason: "bad words",
          upstreamStatus: "FAILURE",
          timedOut: false,
        });
        expect(pollOutcome(record(from), state("FAILURE"), at(AFTER))).toMatchObject({
          reason: "the upstream reported that the task failed",
        });
      });

      for (const to of RUNNING) {
        it(`moves to ${to} only forward, and times out past the deadline`, () => {
          const before = pollOutcome(record(from), state(to), at(BEFORE));
          if (ORDER[to]! > ORDER[from]!) {
            expect(before).toMatchObject({ kind: "advance", to, changes: { upstreamStatus: to } });
          } else {
            expect(before).toEqual({ kind: "release", nextPollAt: BEFORE + TIMING.pollIntervalMs });
          }
          expect(pollOutcome(record(from), state(to), at(AFTER))).toEqual({
            kind: "fail",
            reason: `the task did not finish within ${TIMEOUT_S} seconds`,
            timedOut: true,
          });
        });
      }

      it("stores an unknown status word once and leaves the status as it is", () => {
        const first = pollOutcome(record(from), state(null), at(BEFORE));
        expect(first).toMatchObject({ kind: "advance", to: from, unknownWord: "WEIRD" });
        const again = pollOutcome(record(from, { upstream_status: "WEIRD" }), state(null), at(BEFORE));
        expect(again.kind).toBe("release");
        expect(pollOutcome(record(from), state(null), at(AFTER))).toMatchObject({ kind: "fail", timedOut: true });
      });

      it("backs off after a failed poll, doubling per failure in a row, and times out past the deadline", () => {
        const error: PollReport = { kind: "error", reason: "the upstream does not know the task" };
        expect(pollOutcome(record(from), error, at(BEFORE))).toEqual({
          kind: "back-off",
          nextPollAt: BEFORE + 2_000,
          reason: "the upstream does not know the task",
        });
        expect(pollOutcome(record(from, { poll_errors: 2 }), error, at(BEFORE))).toMatchObject({
          nextPollAt: BEFORE + 8_000,
        });
        expect(pollOutcome(record(from, { poll_errors: 30 }), error, at(BEFORE))).toMatchObject({
          nextPollAt: BEFORE + TIMING.maxPollIntervalMs,
        });
        expect(pollOutcome(record(from), error, at(AFTER))).toMatchObject({ kind: "fail", timedOut: true });
      });
    });
  }

  it("shows progress while running and never lets it drop", () => {
    const running = record("IN_PROGRESS", { progress: "40%", start_time: 5 });
    expect(pollOutcome(running, state("IN_PROGRESS", { progress: "70%" }), at(BEFORE))).toMatchObject({
      kind: "advance",
      to: "IN_PROGRESS",
      changes: { progress: "70%", startTime: undefined },
    });
    expect(pollOutcome(running, state("IN_PROGRESS", { progress: "20%" }), at(BEFORE)).kind).toBe("release");
    // A running task never goes back: QUEUED after IN_PROGRESS reads as still running.
    expect(pollOutcome(running, state("QUEUED", { progress: "90%" }), at(BEFORE))).toMatchObject({
      kind: "advance",
      to: "IN_PROGRESS",
      changes: { progress: "90%" },
    });
  });

  it("stamps the start time when a task first runs", () => {
    const now = BEFORE;
    expect(pollOutcome(record("QUEUED"), state("IN_PROGRESS"), at(now))).toMatchObject({
      changes: { startTime: Math.floor(now / 1000) },
    });
  });

  it("never schedules a poll past the deadline", () => {
    const near = DEADLINE_MS - 100;
    expect(pollOutcome(record("SUBMITTED"), state("SUBMITTED"), at(near))).toEqual({
      kind: "release",
      nextPollAt: DEADLINE_MS,
    });
  });

  it("honours the protocol's shortest gap between polls", () => {
    const timing = { ...TIMING, pollIntervalMs: 100, minIntervalMs: 350 };
    expect(pollOutcome(record("SUBMITTED"), state("SUBMITTED"), { ...at(BEFORE), timing })).toEqual({
      kind: "release",
      nextPollAt: BEFORE + 350,
    });
  });
});
