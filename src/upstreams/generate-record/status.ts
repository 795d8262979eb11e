import type { TaskStatus } from "../../core/tasks/states.js";
import { recordStatus } from "../../core/tasks/upstream-state.js";

/**
 * A generate-record status word (`status`, or `successFlag` on the sub-APIs) read leniently:
 * the known words as the music route maps them, then any word that says the task failed
 * (`GENERATE_WAV_FAILED`, `..._ERROR`, `..._EXCEPTION`) as a failure. Null for other words: the
 * engine logs them and keeps polling.
 */
export function recordWordStatus(word: unknown): { status: TaskStatus; progress: string } | null {
  const known = recordStatus(word);
  if (known || typeof word !== "string") return known;
  const w = word.trim().toUpperCase();
  if (/(FAIL|FAILED|FAILURE|ERROR|EXCEPTION)$/.test(w)) return { status: "FAILURE", progress: "100%" };
  if (w === "RUNNING" || w === "PROCESSING" || w === "GENERATING") return { status: "IN_PROGRESS", progress: "10%" };
  return null;
}
