import type { ChannelType } from "../channel.js";

/** The two audio task families and the upstream protocol serving each; their actions are kinds (kinds.ts). */
export const TASK_FAMILIES = ["audioa", "audiob"] as const;
export type TaskFamily = (typeof TASK_FAMILIES)[number];

/**
 * Every task platform (the tasks table's `platform`): the audio families, served at
 * `/{family}/...` in the envelope shape, and `video`, served as the OpenAI Videos API.
 */
export const TASK_PLATFORMS = [...TASK_FAMILIES, "video"] as const;
export type TaskPlatform = (typeof TASK_PLATFORMS)[number];

export interface FamilySpec {
  /** Channel type (upstream protocol) that serves the family. */
  channelType: ChannelType;
  /** Model asked for when the request names none (`mv` for audioa, `model` for audiob). */
  defaultModel: string;
  /**
   * Whether the family's upstream calls the gateway back when a task moves: its tasks get a
   * callback secret, and the family a callback route that makes the task due for a poll now.
   */
  upstreamCallbacks: boolean;
  /** The public task id's prefix (`task_...`, `video_...`). */
  idPrefix: string;
}

export const FAMILY_SPECS: Record<TaskPlatform, FamilySpec> = {
  audioa: { channelType: "task-relay", defaultModel: "chirp-v3-5", upstreamCallbacks: false, idPrefix: "task" },
  audiob: { channelType: "generate-record", defaultModel: "V4_5", upstreamCallbacks: true, idPrefix: "task" },
  video: { channelType: "openai-videos", defaultModel: "sora-2", upstreamCallbacks: false, idPrefix: "video" },
};

export function isTaskFamily(word: string): word is TaskFamily {
  return (TASK_FAMILIES as readonly string[]).includes(word);
}
