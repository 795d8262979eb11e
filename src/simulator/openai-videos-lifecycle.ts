/**
 * A simulated video's life: its whole future is decided at create (how it ends, which of its
 * retrieves fail, whether its content is slow), and each retrieve moves it one step on.
 */

import type { VideoObject } from "../core/videos/video-object.js";
import type { VideoCreateRequest } from "./openai-videos-request.js";
import type { VideosSimOptions } from "./options.js";

export interface SimVideo {
  id: string;
  model: string;
  prompt: string;
  seconds: VideoCreateRequest["seconds"];
  size: VideoCreateRequest["size"];
  createdAt: number;
  remixedFrom: string | null;
  ends: "completed" | "failed";
  /** Retrieves still to be answered 500 (Infinity: all of them). */
  pollErrors: number;
  /** How long its content takes to trickle out (ms), or null: at once. */
  slowContentMs: number | null;
  /** Retrieves answered so far. */
  polls: number;
  /** When it reached its end (ms), once it has. */
  finishedAt: number | null;
}

/** What a video's prompt markers (or else the options) decide about it, and the randomness used. */
export function planVideo(prompt: string, options: VideosSimOptions, random: () => number) {
  const forced = options.outcome;
  const pollCount = /\[poll500=(\d+)\]/.exec(prompt)?.[1];
  const slowMs = /\[slowcontent=(\d+)\]/.exec(prompt)?.[1];
  const drawn = {
    createError: random() < (options.createErrorRate ?? 0),
    rateLimited: random() < (options.rateLimitRate ?? 0),
    fails: random() < (options.failureRate ?? 0),
    slow: random() < (options.slowContentRate ?? 0),
  };
  return {
    createStatus:
      prompt.includes("[error500]") || forced === "create-500" || drawn.createError
        ? 500
        : prompt.includes("[error429]") || forced === "create-429" || drawn.rateLimited
          ? 429
          : 200,
    ends:
      prompt.includes("[fail]") || forced === "failed" || drawn.fails ? ("failed" as const) : ("completed" as const),
    pollErrors:
      pollCount !== undefined
        ? Number(pollCount)
        : prompt.includes("[poll500]") || forced === "poll-500"
          ? Number.POSITIVE_INFINITY
          : 0,
    slowContentMs:
      slowMs !== undefined
        ? Number(slowMs)
        : prompt.includes("[slowcontent]") || drawn.slow
          ? (options.slowContentMs ?? 3000)
          : null,
  };
}

/** The steps a video takes from its first retrieve to its end. */
export function stepsOf(options: VideosSimOptions): number {
  return Math.max(1, Math.floor(options.stepsToComplete ?? 2));
}

/** Moves a video one step on (one retrieve), ending it at `now` when its steps are done. */
export function advanceVideo(video: SimVideo, options: VideosSimOptions, now: number): void {
  if (video.finishedAt !== null) return;
  video.polls += 1;
  if (video.polls >= stepsOf(options)) video.finishedAt = now;
}

/** Seconds from `completed_at` to `expires_at`. */
function expirySeconds(options: VideosSimOptions): number {
  if (options.expiresAfterSeconds !== undefined) return options.expiresAfterSeconds;
  if (options.forgetAfterMs !== undefined) return Math.ceil(options.forgetAfterMs / 1000);
  return 3600;
}

/** True once the upstream's copy of a finished video is gone (`forgetAfterMs` past its end). */
export function forgotten(video: SimVideo, options: VideosSimOptions, now: number): boolean {
  return (
    video.finishedAt !== null && options.forgetAfterMs !== undefined && now - video.finishedAt >= options.forgetAfterMs
  );
}

/** The video object as the API shows it now. */
export function videoObject(video: SimVideo, options: VideosSimOptions): VideoObject {
  const steps = stepsOf(options);
  const finished = video.finishedAt !== null;
  const status = finished ? video.ends : video.polls === 0 ? "queued" : "in_progress";
  const lastProgress = Math.floor((100 * Math.min(video.polls, steps - 1)) / steps);
  const completedAt = finished && video.ends === "completed" ? Math.floor((video.finishedAt as number) / 1000) : null;
  return {
    id: video.id,
    object: "video",
    model: video.model,
    status,
    progress: status === "completed" ? 100 : status === "queued" ? 0 : lastProgress,
    created_at: Math.floor(video.createdAt / 1000),
    completed_at: completedAt,
    expires_at: completedAt === null ? null : completedAt + expirySeconds(options),
    prompt: video.prompt,
    seconds: video.seconds,
    size: video.size,
    error:
      status === "failed"
        ? { code: "moderation_blocked", message: "Your request was blocked by our moderation system." }
        : null,
    remixed_from_video_id: video.remixedFrom,
  };
}

/** A video id as the API makes them: `video_` and 32 hex digits (from the seeded random numbers). */
export function videoId(random: () => number): string {
  return `video_${Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join("")}`;
}
