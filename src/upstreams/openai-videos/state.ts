import type { Channel } from "../../core/channel.js";
import type { VideoClip } from "../../core/tasks/clips.js";
import { parseProgress, type TaskStatus } from "../../core/tasks/states.js";
import type { UpstreamTaskState } from "../../core/tasks/upstream-state.js";
import { type UpstreamVideo, upstreamContentUrls } from "./api.js";

// Every word of the Videos API, mapped explicitly; anything else is unknown (logged, left running).
const VIDEO_STATUS: Record<string, TaskStatus> = {
  queued: "QUEUED",
  in_progress: "IN_PROGRESS",
  completed: "SUCCESS",
  failed: "FAILURE",
};

/** An upstream video object in the gateway's words; a completed one names its three content files. */
export function videoTaskState(channel: Channel, video: UpstreamVideo, nowMs: number): UpstreamTaskState {
  const status = VIDEO_STATUS[video.status] ?? null;
  const progress = parseProgress(video.progress ?? null);
  if (status === "SUCCESS") {
    const urls = upstreamContentUrls(channel, video.id);
    const clip: VideoClip = {
      clip_id: video.id,
      state: "completed",
      title: "",
      audio_url: null,
      video_url: urls.video,
      image_url: urls.thumbnail,
      spritesheet_url: urls.spritesheet,
      created_at: new Date(nowMs).toISOString(),
    };
    return { status, rawStatus: video.status, progress: "100%", failReason: "", clips: [clip] };
  }
  const failReason =
    status === "FAILURE"
      ? video.error?.message || video.error?.code || "the upstream reported that the video failed"
      : "";
  return { status, rawStatus: video.status, progress, failReason, clips: [] };
}
