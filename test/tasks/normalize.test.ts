import { describe, expect, it } from "vitest";
import { isoTimestamp, normalizeRecordClip, normalizeRelayClip } from "../../src/core/tasks/clips.js";
import { renderTaskRecord, type TaskView } from "../../src/core/tasks/record.js";
import { canMove, parseProgress } from "../../src/core/tasks/states.js";
import {
  normalizeRecordInfo,
  normalizeRelayTask,
  recordStatus,
  relayStatus,
} from "../../src/core/tasks/upstream-state.js";

const NO_TUNING = { negative_tags: null, style_weight: null, weirdness_constraint: null, audio_weight: null };

describe("normalizing upstream answers", () => {
  it("maps every task-relay status word explicitly and leaves unknown words unknown", () => {
    expect(relayStatus("NOT_START")).toBe("SUBMITTED");
    expect(relayStatus("SUBMITTED")).toBe("SUBMITTED");
    expect(relayStatus("QUEUED")).toBe("QUEUED");
    expect(relayStatus("IN_PROGRESS")).toBe("IN_PROGRESS");
    expect(relayStatus("SUCCESS")).toBe("SUCCESS");
    expect(relayStatus("succeeded")).toBe("SUCCESS");
    expect(relayStatus("FAILURE")).toBe("FAILURE");
    expect(relayStatus("UNKNOWN")).toBeNull();
    expect(relayStatus("PAUSED")).toBeNull();
    expect(relayStatus(42)).toBeNull();
  });

  it("maps every generate-record status word with the progress it stands for", () => {
    expect(recordStatus("PENDING")).toEqual({ status: "IN_PROGRESS", progress: "10%" });
    expect(recordStatus("TEXT_SUCCESS")).toEqual({ status: "IN_PROGRESS", progress: "40%" });
    expect(recordStatus("FIRST_SUCCESS")).toEqual({ status: "IN_PROGRESS", progress: "70%" });
    expect(recordStatus("SUCCESS")).toEqual({ status: "SUCCESS", progress: "100%" });
    for (const w of ["CREATE_TASK_FAILED", "GENERATE_AUDIO_FAILED", "CALLBACK_EXCEPTION", "SENSITIVE_WORD_ERROR"]) {
      expect(recordStatus(w)?.status).toBe("FAILURE");
    }
    expect(recordStatus("SOMETHING_NEW")).toBeNull();
  });

  it("turns a relay clip into the audioa clip shape", () => {
    const clip = normalizeRelayClip(
      {
        id: "e9893d04-5b1a-4c3e-9f55-0d4e3f8b2a11",
        title: "Electric Dance Party",
        status: "complete",
        audio_url: "https://cdn.example/a.mp3",
        video_url: "",
        image_url: "https://cdn.example/a.jpeg",
        model_name: "chirp-v3",
        metadata: { tags: "edm", prompt: "[Verse]", duration: null },
        created_at: "2024-05-20T07:56:26Z",
      },
      0,
    );
    expect(clip).toEqual({
      clip_id: "e9893d04-5b1a-4c3e-9f55-0d4e3f8b2a11",
      state: "completed",
      title: "Electric Dance Party",
      sound: "edm",
      lyrics: "[Verse]",
      image_url: "https://cdn.example/a.jpeg",
      audio_url: "https://cdn.example/a.mp3",
      video_url: null,
      created_at: "2024-05-20T07:56:26.000Z",
      mv: "chirp-v3",
      seed: null,
      duration: null,
    });
  });

  it("reads a chained gateway's normalized clips inside data.clips", () => {
    const state = normalizeRelayTask(
      {
        task_id: "task_abc",
        status: "SUCCESS",
        progress: "100%",
        data: { clips: [{ clip_id: "c1", state: "completed", sound: "pop", lyrics: "la", mv: "v3", audio_url: "u" }] },
      },
      0,
    );
    expect(state?.clips[0]).toMatchObject({ clip_id: "c1", sound: "pop", lyrics: "la", mv: "v3", state: "completed" });
  });

  it("turns a record-info answer into the audiob clip shape with the request's tuning", () => {
    const state = normalizeRecordInfo(
      {
        taskId: "t1",
        status: "SUCCESS",
        response: {
          sunoData: [
            {
              id: "e231c9a0-0000-4000-8000-000000000001",
              audioUrl: "https://cdn.example/x.mp3",
              imageUrl: "https://cdn.example/x.jpeg",
              prompt: "[Verse] night",
              title: "Night Drive",
              tags: "synthwave, dreamy",
              createTime: "2025-01-01 00:00:00",
              duration: 198.44,
            },
          ],
        },
      },
      { ...NO_TUNING, style_weight: 0.5 },
      0,
    );
    expect(state.status).toBe("SUCCESS");
    expect(state.clips[0]).toEqual({
      clip_id: "e231c9a0-0000-4000-8000-000000000001",
      state: "completed",
      title: "Night Drive",
      tags: "synthwave, dreamy",
      lyrics: "[Verse] night",
      image_url: "https://cdn.example/x.jpeg",
      audio_url: "https://cdn.example/x.mp3",
      video_url: null,
      created_at: "2025-01-01T00:00:00.000Z",
      duration: 198.44,
      negative_tags: null,
      style_weight: 0.5,
      weirdness_constraint: null,
      audio_weight: null,
    });
    const failed = normalizeRecordInfo({ status: "SENSITIVE_WORD_ERROR", errorMessage: "blocked" }, NO_TUNING, 0);
    expect(failed).toMatchObject({ status: "FAILURE", failReason: "blocked", clips: [] });
    expect(normalizeRecordClip(null, 0, NO_TUNING)).toBeNull();
  });

  it("reads progress and timestamps leniently", () => {
    expect(parseProgress("40%")).toBe("40%");
    expect(parseProgress(40)).toBe("40%");
    expect(parseProgress(0.4)).toBe("40%");
    expect(parseProgress("n/a")).toBeNull();
    expect(isoTimestamp(1716191749, 0)).toBe("2024-05-20T07:55:49.000Z");
    expect(isoTimestamp("garbage", 0)).toBe("1970-01-01T00:00:00.000Z");
  });

  it("never moves a task out of a terminal state or back to an earlier one", () => {
    expect(canMove("SUCCESS", "FAILURE")).toBe(false);
    expect(canMove("FAILURE", "SUCCESS")).toBe(false);
    expect(canMove("IN_PROGRESS", "QUEUED")).toBe(false);
    expect(canMove("SUBMITTED", "IN_PROGRESS")).toBe(true);
    expect(canMove("QUEUED", "FAILURE")).toBe(true);
  });
});

describe("rendering a task record", () => {
  const base: TaskView = {
    id: 1,
    created_at: 10,
    updated_at: 20,
    task_id: "task_x",
    platform: "audioa",
    user_id: 3,
    group: "default",
    channel_id: 4,
    quota: 50000,
    action: "MUSIC",
    status: "IN_PROGRESS",
    fail_reason: "",
    result_url: null,
    submit_time: 10,
    start_time: 12,
    finish_time: 0,
    progress: "40%",
    properties: '{"input":"p","upstream_model_name":"u","origin_model_name":"o"}',
    data: '{"clips":[{"clip_id":"stale"}]}',
    upstream_id: "up-1",
  };

  it("derives data from the state, so a failed record never shows an earlier payload", () => {
    expect(renderTaskRecord(base).data).toEqual({ progress: "40%", status: "IN_PROGRESS", task_id: "up-1" });
    const failed = renderTaskRecord({
      ...base,
      status: "FAILURE",
      fail_reason: "timeout",
      progress: "100%",
      finish_time: 30,
    });
    expect(failed.data).toEqual({ progress: "100%", status: "FAILURE", task_id: "", fail_reason: "timeout" });
    expect("result_url" in failed).toBe(false);
    expect(renderTaskRecord({ ...base, status: "QUEUED" }).data).toEqual({
      progress: "40%",
      status: "QUEUED",
      task_id: "",
    });
  });

  it("shows result_url and the family's success payload only after SUCCESS", () => {
    const ok = renderTaskRecord({ ...base, status: "SUCCESS", result_url: "https://a", progress: "100%" });
    expect(ok.result_url).toBe("https://a");
    expect(ok.data).toEqual({ clips: [{ clip_id: "stale" }], progress: "100%", quota: "50000" });
    const b = renderTaskRecord({ ...base, platform: "audiob", status: "SUCCESS", result_url: "https://a" });
    expect(b.data).toEqual({ clips: [{ clip_id: "stale" }] });
  });
});
