import { isTerminal } from "../tasks/states.js";
import { videoFileKeys } from "./video-object.js";

/** A stored video task as these rules need it. */
export interface VideoRowRef {
  id: number;
  task_id: string;
  status: string;
  data: string;
}

/** Where a video's files live and how the rows record what happened to them. */
export interface VideoFilesPort {
  deleteBlob(key: string): Promise<boolean>;
  markFilesRemoved(id: number): Promise<void>;
}

export interface VideoDeletePort extends VideoFilesPort {
  /** The video as it stands now (deleted or not), or undefined. */
  reread(id: number): Promise<VideoRowRef | undefined>;
  markDeleted(id: number): Promise<boolean>;
  /** FAILURE + refund by compare-and-set from `from` (the task store's fail). */
  fail(id: number, from: string, reason: string): Promise<boolean>;
}

/** The reason a video deleted before it completed ends with. */
export const DELETED_BEFORE_COMPLETION = "the video was deleted before it completed";

/** Removes a completed video's stored files (video, thumbnail, spritesheet) and records it. */
export async function removeVideoFiles(port: VideoFilesPort, row: VideoRowRef): Promise<number> {
  const keys = Object.values(videoFileKeys(row.data));
  for (const key of keys) await port.deleteBlob(key);
  await port.markFilesRemoved(row.id);
  return keys.length;
}

/**
 * Deletes a video: hidden from its owner at once; a video still running is stopped as FAILURE
 * and refunded in full (the caller never gets it, so never pays for it); a completed one keeps its
 * charge and loses its stored files. The state at the moment of the delete decides: a video the
 * poller completes first is completed (charged, files removed).
 */
export async function deleteVideo(port: VideoDeletePort, row: VideoRowRef): Promise<void> {
  await port.markDeleted(row.id);
  let current: VideoRowRef | undefined = row;
  // A compare-and-set lost to the poller's move: read the new state and decide again.
  for (let attempt = 0; attempt < 5 && current && !isTerminal(current.status); attempt++) {
    if (await port.fail(current.id, current.status, DELETED_BEFORE_COMPLETION)) return;
    current = await port.reread(current.id);
  }
  if (current?.status === "SUCCESS") await removeVideoFiles(port, current);
}
