import { describe, expect, it } from "vitest";
import type { Channel } from "../channel.js";
import type { AudioaClip } from "./clips.js";
import type { PolledRecord } from "./poll-outcome.js";
import { afterFailedCopy, type ResultCopierPort, ResultCopyError, storeResultFiles } from "./result-files.js";

const channel = { id: 1 } as Channel;

function clip(id: string, over: Partial<AudioaClip> = {}): AudioaClip {
  return {
    clip_id: id,
    state: "completed",
    title: "",
    sound: "",
    lyrics: "",
    image_url: `https://cdn.example/${id}.png`,
    audio_url: `https://cdn.example/${id}.mp3`,
    video_url: null,
    created_at: "2026-01-01T00:00:00.000Z",
    mv: "chirp-v3-5",
    seed: null,
    duration: 10,
    ...over,
  };
}

function copier(fail?: (url: string) => ResultCopyError | Error | null): ResultCopierPort & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    isStored: (url) => url.startsWith("https://gw.example/"),
    async copy(file) {
      calls.push(file.url);
      const err = fail?.(file.url);
      if (err) throw err;
      return `https://gw.example/${file.family}/files/${file.field}-${calls.length}`;
    },
  };
}

const record: PolledRecord = {
  status: "IN_PROGRESS",
  progress: "80%",
  start_time: 1_001,
  submit_time: 1_000,
  upstream_status: "streaming",
  poll_errors: 0,
  properties: "{}",
};
const clock = (nowMs: number) => ({
  nowMs,
  timeoutSeconds: 600,
  timing: { pollIntervalMs: 1_000, maxPollIntervalMs: 16_000 },
});

describe("storing result files", () => {
  it("points every result field at the gateway's copy and copies a repeated URL once", async () => {
    const c = copier();
    const shared = "https://cdn.example/cover.png";
    const out = await storeResultFiles(
      [clip("a", { image_url: shared, video_url: "https://cdn.example/a.mp4" }), clip("b", { image_url: shared })],
      "audioa",
      channel,
      c,
    );
    expect(out.kind).toBe("stored");
    if (out.kind !== "stored") return;
    expect(c.calls).toEqual([
      "https://cdn.example/a.mp3",
      "https://cdn.example/a.mp4",
      shared,
      "https://cdn.example/b.mp3",
    ]);
    expect(out.copied).toBe(4);
    expect(out.copies).toHaveLength(4);
    const clips = out.clips as AudioaClip[];
    for (const stored of clips) {
      expect(stored.audio_url).toMatch(/^https:\/\/gw\.example\/audioa\/files\//);
      expect(stored.image_url).toMatch(/^https:\/\/gw\.example\/audioa\/files\//);
    }
    expect(clips[0]?.image_url).toBe(clips[1]?.image_url);
    expect(clips[1]?.video_url).toBeNull();
  });

  it("leaves empty fields and URLs that already are the gateway's as they are", async () => {
    const c = copier();
    const own = "https://gw.example/audioa/files/x.mp3";
    const out = await storeResultFiles([clip("a", { audio_url: own, image_url: "" })], "audioa", channel, c);
    expect(c.calls).toEqual([]);
    expect(out).toMatchObject({ kind: "stored", copied: 0, clips: [{ audio_url: own, image_url: "" }] });
  });

  it("stops at the first failure and says whether trying again can help", async () => {
    const lasting = await storeResultFiles(
      [clip("a"), clip("b")],
      "audioa",
      channel,
      copier(() => new ResultCopyError(true, "too large")),
    );
    expect(lasting).toEqual({ kind: "failed", lasting: true, reason: "too large", copies: [] });
    const passing = await storeResultFiles(
      [clip("a")],
      "audioa",
      channel,
      copier(() => new Error("reset")),
    );
    expect(passing).toEqual({ kind: "failed", lasting: false, reason: "reset", copies: [] });
    // A failure after some copies names them, so that they can be discarded.
    const half = await storeResultFiles(
      [clip("a")],
      "audioa",
      channel,
      copier((url) => (url.endsWith(".png") ? new Error("reset") : null)),
    );
    expect(half).toEqual({
      kind: "failed",
      lasting: false,
      reason: "reset",
      copies: ["https://gw.example/audioa/files/audio_url-1"],
    });
  });
});

describe("a failed copy", () => {
  it("fails the task at once when trying again cannot help", () => {
    const t = afterFailedCopy(record, { lasting: true, reason: "too large" }, clock(1_100_000));
    expect(t).toMatchObject({ kind: "fail", timedOut: false });
    expect(t.kind === "fail" && t.reason).toContain("too large");
  });

  it("backs off like a failed poll while the task has time, doubling per failure", () => {
    const first = afterFailedCopy(record, { lasting: false, reason: "reset" }, clock(1_100_000));
    const third = afterFailedCopy({ ...record, poll_errors: 2 }, { lasting: false, reason: "reset" }, clock(1_100_000));
    expect(first).toMatchObject({ kind: "back-off", nextPollAt: 1_102_000 });
    expect(third).toMatchObject({ kind: "back-off", nextPollAt: 1_108_000 });
  });

  it("fails the task, naming the copy, once its deadline has passed", () => {
    const t = afterFailedCopy(record, { lasting: false, reason: "reset" }, clock(1_600_001));
    expect(t).toMatchObject({ kind: "fail", timedOut: true });
    expect(t.kind === "fail" && t.reason).toMatch(/could not be stored: reset \(still failing after 600 seconds\)/);
  });
});
