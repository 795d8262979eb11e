import { describe, expect, it } from "vitest";
import { readLyricsRecord, readMusicRecord, readStemsRecord, readVideoRecord, readWavRecord } from "./results.js";

const read = {
  upstreamId: "up-1",
  tuning: { negative_tags: null, style_weight: null, weirdness_constraint: null, audio_weight: null },
  nowMs: Date.parse("2026-01-02T03:04:05Z"),
};

describe("reading generate-record answers", () => {
  it("names one clip per stem URL, keeps stems it does not list, and leaves the source out", () => {
    const state = readStemsRecord(
      {
        successFlag: "SUCCESS",
        response: {
          originUrl: "https://cdn.example/o.mp3",
          vocalUrl: "https://cdn.example/v.mp3",
          drumsUrl: "https://cdn.example/d.mp3",
          guitarUrl: null,
          choirPadUrl: "https://cdn.example/c.mp3",
        },
      },
      read,
    );
    expect(state.status).toBe("SUCCESS");
    expect(state.clips.map((c) => [c.title, c.audio_url])).toEqual([
      ["vocals", "https://cdn.example/v.mp3"],
      ["drums", "https://cdn.example/d.mp3"],
      ["choir_pad", "https://cdn.example/c.mp3"],
    ]);
    // The same ids on every poll of the task.
    expect(
      readStemsRecord({ successFlag: "SUCCESS", response: { vocalUrl: "https://x/v.mp3" } }, read).clips[0]?.clip_id,
    ).toBe(state.clips[0]?.clip_id);
  });

  it("reads any word that says failed as a failure with the provider's message, other words as unknown", () => {
    const wav = readWavRecord({ successFlag: "GENERATE_WAV_FAILED", errorMessage: "no such audio" }, read);
    expect(wav).toMatchObject({ status: "FAILURE", failReason: "no such audio", clips: [] });
    const music = readMusicRecord({ status: "GENERATE_FAILED", errorMessage: "busy" }, read);
    expect(music).toMatchObject({ status: "FAILURE", failReason: "busy" });
    const odd = readVideoRecord({ successFlag: "WAITING_FOR_GPU" }, read);
    expect(odd).toMatchObject({ status: null, rawStatus: "WAITING_FOR_GPU", clips: [] });
    expect(readWavRecord({ successFlag: "pending" }, read).status).toBe("IN_PROGRESS");
  });

  it("puts a WAV in audio_url and a video in video_url", () => {
    const wav = readWavRecord({ successFlag: "SUCCESS", response: { audioWavUrl: "https://x/a.wav" } }, read);
    expect(wav.clips[0]).toMatchObject({ audio_url: "https://x/a.wav", video_url: null });
    const video = readVideoRecord({ successFlag: "SUCCESS", response: { videoUrl: "https://x/a.mp4" } }, read);
    expect(video.clips[0]).toMatchObject({ audio_url: "", video_url: "https://x/a.mp4" });
  });

  it("reads lyric sheets as title and text, leaving out sheets that failed", () => {
    const state = readLyricsRecord(
      {
        status: "SUCCESS",
        response: {
          data: [
            { title: "One", text: "[Verse]\nla", status: "complete" },
            { title: "", text: "", status: "failed", errorMessage: "sensitive" },
          ],
        },
      },
      read,
    );
    expect(state.clips).toHaveLength(1);
    expect(state.clips[0]).toMatchObject({ title: "One", text: "[Verse]\nla", audio_url: null, state: "completed" });
  });
});
