import { DEFAULT_VIDEO_SECONDS, DEFAULT_VIDEO_SIZE, type VideoBody } from "../tasks/kinds/video-body.js";
import type { StoredTask } from "../tasks/ports.js";
import { parseObject } from "../tasks/record.js";

/** The video object of the OpenAI Videos API: what the gateway answers, and the simulated upstream too. */
export interface VideoObject {
  id: string;
  object: "video";
  model: string;
  status: "queued" | "in_progress" | "completed" | "failed";
  progress: number;
  created_at: number;
  completed_at: number | null;
  expires_at: number | null;
  prompt: string | null;
  seconds: string;
  size: string;
  error: { code: string; message: string } | null;
  remixed_from_video_id: string | null;
}

/** The stored files of a completed video, by content variant. */
export const VIDEO_VARIANTS = ["video", "thumbnail", "spritesheet"] as const;
export type VideoVariant = (typeof VIDEO_VARIANTS)[number];

const VARIANT_FIELD: Record<VideoVariant, string> = {
  video: "video_url",
  thumbnail: "image_url",
  spritesheet: "spritesheet_url",
};

function statusOf(status: string): VideoObject["status"] {
  if (status === "SUCCESS") return "completed";
  if (status === "FAILURE") return "failed";
  if (status === "IN_PROGRESS") return "in_progress";
  return "queued";
}

/** When a completed video's stored content expires (unix seconds): its completion plus the retention. */
export function videoExpiresAt(finishTime: number, retentionSeconds: number): number {
  return Number(finishTime) + Math.ceil(retentionSeconds);
}

/** Renders a stored video task as the API's video object. */
export function renderVideo(row: StoredTask, retentionSeconds: number): VideoObject {
  const body = parseObject(row.request_body) as Partial<VideoBody>;
  const props = parseObject(row.properties) as Record<string, any>;
  const status = statusOf(row.status);
  const done = status === "completed";
  const percent = Number.parseInt(row.progress, 10);
  return {
    id: row.task_id,
    object: "video",
    model: typeof props.origin_model_name === "string" ? props.origin_model_name : (body.model ?? ""),
    status,
    progress: done ? 100 : Number.isFinite(percent) ? Math.max(0, Math.min(100, percent)) : 0,
    created_at: Number(row.submit_time),
    completed_at: done ? Number(row.finish_time) : null,
    expires_at: done ? videoExpiresAt(row.finish_time, retentionSeconds) : null,
    prompt: body.prompt ?? null,
    seconds: body.seconds ?? DEFAULT_VIDEO_SECONDS,
    size: body.size ?? DEFAULT_VIDEO_SIZE,
    error: status === "failed" ? { code: "video_generation_failed", message: row.fail_reason } : null,
    remixed_from_video_id: body.remixed_from_video_id ?? null,
  };
}

/**
 * The blob keys of a completed video's stored files, by variant (the key is the last segment of
 * the stored copy's URL); a variant without a stored file is absent.
 */
export function videoFileKeys(data: string): Partial<Record<VideoVariant, string>> {
  const clip = (parseObject(data) as { clips?: Array<Record<string, unknown>> }).clips?.[0];
  const out: Partial<Record<VideoVariant, string>> = {};
  if (!clip || typeof clip !== "object") return out;
  for (const variant of VIDEO_VARIANTS) {
    const url = clip[VARIANT_FIELD[variant]];
    if (typeof url !== "string" || url === "") continue;
    const key = url.slice(url.lastIndexOf("/") + 1);
    if (key !== "") out[variant] = key;
  }
  return out;
}
