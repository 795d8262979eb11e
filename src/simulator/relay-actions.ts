import { lyricSheet } from "./media.js";
import { simMediaUrl } from "./media-files.js";
import type { SimulatorState } from "./state.js";

/** One result a simulated `task-relay` task hands back, decided at submit. */
export interface RelayOutput {
  id: string;
  title: string;
  /** A lyric sheet's text (LYRICS): the clip then has no audio. */
  lyrics?: string;
  /** The audio file's kind; null for a lyric sheet. */
  audio: "mp3" | "wav" | null;
  /** Whether the clip also has a video (MUSIC_VIDEO). */
  video: boolean;
  /** Where the audio is when it is not a file of the simulator's (an UPLOAD's own file). */
  audioUrl?: string;
}

/** The stems each STEMS `kind` yields, one clip per stem. */
export const SIM_STEMS: Readonly<Record<string, readonly string[]>> = {
  vocals: ["vocals", "instrumental"],
  all: ["vocals", "backing_vocals", "drums", "bass", "guitar", "keyboard", "other"],
};

const text = (v: unknown, fallback: string) => (typeof v === "string" && v !== "" ? v : fallback);

/**
 * What an action yields: lyric sheets for LYRICS, one clip for UPLOAD, WAV and MUSIC_VIDEO, one
 * clip per stem for STEMS, and `clipsPerTask` songs for the actions that make music (MUSIC,
 * EXTEND, COVER, the vocal and instrumental layers...).
 */
export function relayOutputs(
  action: string,
  body: Record<string, unknown>,
  clipsPerTask: number,
  newId: () => string,
): RelayOutput[] {
  const title = text(body.title, "Untitled");
  switch (action) {
    case "LYRICS": {
      const prompt = text(body.prompt, "a song");
      return [0, 1].map((variant) => {
        const sheet = lyricSheet(prompt, variant);
        return { id: newId(), title: sheet.title, lyrics: sheet.text, audio: null, video: false };
      });
    }
    case "UPLOAD":
      // The upstream keeps the file where it was handed over: the gateway's stored copy.
      return [
        { id: newId(), title: "Uploaded audio", audio: "mp3", video: false, audioUrl: text(body.url, "") || undefined },
      ];
    case "WAV":
      return [{ id: newId(), title, audio: "wav", video: false }];
    case "MUSIC_VIDEO":
      return [{ id: newId(), title, audio: "mp3", video: true }];
    case "STEMS":
      return (SIM_STEMS[text(body.kind, "vocals")] ?? SIM_STEMS.vocals ?? []).map((stem) => ({
        id: newId(),
        title: stem,
        audio: "wav" as const,
        video: false,
      }));
    default:
      return Array.from({ length: Math.max(1, clipsPerTask) }, () => ({
        id: newId(),
        title,
        audio: "mp3",
        video: false,
      }));
  }
}

/** What of a simulated task its clips show. */
export interface RelayClipTask {
  createdAt: number;
  fails: boolean;
  tags: string;
  prompt: string;
  model: string;
}

/** One clip of a `task-relay` fetch answer: a song, a stem, a WAV, a video, or a lyric sheet. */
export function relayClip(state: SimulatorState, task: RelayClipTask, output: RelayOutput, phase: string) {
  const status = phase === "done" ? (task.fails ? "error" : "complete") : phase === "queued" ? "queued" : "streaming";
  const created_at = new Date(task.createdAt).toISOString();
  if (output.lyrics !== undefined) {
    return { id: output.id, title: output.title, text: output.lyrics, status, audio_url: null, created_at };
  }
  return {
    id: output.id,
    title: output.title,
    status,
    audio_url: output.audioUrl ?? simMediaUrl(state, output.id, output.audio ?? "mp3"),
    video_url: output.video ? simMediaUrl(state, output.id, "mp4") : "",
    image_url: simMediaUrl(state, output.id, "png"),
    image_large_url: simMediaUrl(state, `${output.id}-l`, "png"),
    major_model_version: "v3",
    model_name: task.model,
    metadata: {
      tags: task.tags,
      prompt: task.prompt,
      gpt_description_prompt: null,
      duration: null,
      error_type: task.fails && phase === "done" ? "simulated" : null,
      error_message: task.fails && phase === "done" ? "simulated failure" : null,
      type: "gen",
    },
    created_at,
  };
}
