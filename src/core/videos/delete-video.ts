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
}

/**
 * What became of a deleted video's charge: `open` while the upstream job runs on (settled when
 * it completes, refunded when it fails), `settled` for a video that had completed, `refunded`
 * for one that had failed.
 */
export type DeletedVideoCharge = "open" | "settled" | "refunded";

/** Removes a completed video's stored files (video, thumbnail, spritesheet) and records it. */
export async function removeVideoFiles(port: VideoFilesPort, row: VideoRowRef): Promise<number> {
  const keys = Object.values(videoFileKeys(row.data));
  for (const key of keys) await port.deleteBlob(key);
  await port.markFilesRemoved(row.id);
  return keys.length;
}

/**
 * Deletes a video: hidden from its owner at once; a completed one loses its stored files and keeps
 * its charge (it was delivered); a failed one was refunded already. A video still being made is
 * not stopped, since the upstream cannot cancel a job in progress (the Videos API deletes
 * only completed or failed videos) and bills it when it completes: the task keeps running and its
 * charge stays open, settled if the job completes and refunded if it fails, so no create-and-delete
 * costs the operator what the user did not pay. A video that completes after the delete keeps no
 * files (the task store's success of a deleted task stores none).
 */
export async function deleteVideo(port: VideoDeletePort, row: VideoRowRef): Promise<DeletedVideoCharge> {
  await port.markDeleted(row.id);
  // Read again after the mark: a success committed before it kept its files, which go now.
  const current = (await port.reread(row.id)) ?? row;
  if (current.status === "SUCCESS") {
    await removeVideoFiles(port, current);
    return "settled";
  }
  if (isTerminal(current.status)) return "refunded";
  return "open";
}
