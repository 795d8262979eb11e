import { randomUUID } from "node:crypto";
import type { AudiobClip } from "../../core/tasks/clips.js";
import { isoTimestamp } from "../../core/tasks/clips.js";
import type { UploadBody } from "../../core/tasks/kinds/new-material.js";
import type { PolledTask } from "../../core/tasks/ports.js";
import type { UpstreamTaskState } from "../../core/tasks/upstream-state.js";

/**
 * UPLOAD on generate-record. The provider has no upload route, and needs none: the gateway has
 * already brought the file in and stored it (after the task's charge) before the send, and the provider's
 * routes that take audio take a URL (`uploadUrl`). So UPLOAD completes in the gateway, through
 * the engine like every action: the send calls no upstream and names the task with a new UUID,
 * which becomes the upload's clip id (`upload_id`); the first poll calls no upstream either and
 * answers SUCCESS with one clip whose `audio_url` is the gateway's URL of the stored file. The
 * charge, the record, the webhook and the refund rules are those of any task.
 */
export function sendUpload(): string {
  return randomUUID();
}

/** The finished state of an UPLOAD task: one clip, the stored file. */
export function uploadState(task: PolledTask, nowMs: number): UpstreamTaskState {
  const url = (task.body as UploadBody).url;
  if (typeof url !== "string" || url === "") {
    return { status: "FAILURE", rawStatus: "UPLOAD_FAILED", progress: "100%", failReason: "no stored file", clips: [] };
  }
  const clip: AudiobClip = {
    clip_id: task.upstreamId,
    state: "completed",
    title: "upload",
    tags: "",
    lyrics: "",
    image_url: "",
    audio_url: url,
    video_url: null,
    created_at: isoTimestamp(null, nowMs),
    duration: 0,
    negative_tags: null,
    style_weight: null,
    weirdness_constraint: null,
    audio_weight: null,
  };
  return { status: "SUCCESS", rawStatus: "SUCCESS", progress: "100%", failReason: "", clips: [clip] };
}
