/**
 * The two audio task families; their actions are kinds (kinds.ts), and the channel types serving
 * each are those whose task adapter names its kinds (upstreams/registry.ts).
 */
export const TASK_FAMILIES = ["audioa", "audiob"] as const;
export type TaskFamily = (typeof TASK_FAMILIES)[number];

/**
 * Every task platform (the tasks table's `platform`): the audio families, served at
 * `/{family}/...` in the envelope shape, and `video`, served as the OpenAI Videos API.
 */
export const TASK_PLATFORMS = [...TASK_FAMILIES, "video"] as const;
export type TaskPlatform = (typeof TASK_PLATFORMS)[number];

export interface FamilySpec {
  /** What a channel type whose task adapter does the platform's kinds is said to serve. */
  capability: "tasks" | "videos";
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
  audioa: { capability: "tasks", defaultModel: "chirp-v3-5", upstreamCallbacks: false, idPrefix: "task" },
  audiob: { capability: "tasks", defaultModel: "V4_5", upstreamCallbacks: true, idPrefix: "task" },
  video: { capability: "videos", defaultModel: "sora-2", upstreamCallbacks: false, idPrefix: "video" },
};

export function isTaskFamily(word: string): word is TaskFamily {
  return (TASK_FAMILIES as readonly string[]).includes(word);
}
