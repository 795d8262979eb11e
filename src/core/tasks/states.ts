/**
 * Task states and the rules of moving between them. A state changes only by compare-and-set in
 * the store; these functions decide which moves are legal and what a state looks like.
 */
export const TASK_STATUSES = ["NOT_START", "SUBMITTED", "QUEUED", "IN_PROGRESS", "SUCCESS", "FAILURE"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** States in which the task runs at the upstream and is polled. */
export const POLLED_STATUSES = ["SUBMITTED", "QUEUED", "IN_PROGRESS"] as const satisfies readonly TaskStatus[];

export function isTerminal(status: string): boolean {
  return status === "SUCCESS" || status === "FAILURE";
}

const ORDER: Record<TaskStatus, number> = {
  NOT_START: 0,
  SUBMITTED: 1,
  QUEUED: 2,
  IN_PROGRESS: 3,
  SUCCESS: 4,
  FAILURE: 4,
};

/**
 * Whether a task may move from `from` to `to`. A running task never goes back (an upstream that
 * reports QUEUED after IN_PROGRESS is read as "still running"), and nothing leaves a terminal state.
 */
export function canMove(from: TaskStatus, to: TaskStatus): boolean {
  if (isTerminal(from)) return false;
  if (isTerminal(to)) return true;
  return ORDER[to] >= ORDER[from];
}

/** Percentage text as the record shows it: an integer 0..100 followed by `%`. */
export function progressText(percent: number): string {
  const clamped = Math.max(0, Math.min(100, Math.round(Number.isFinite(percent) ? percent : 0)));
  return `${clamped}%`;
}

/**
 * Reads an upstream progress value leniently: `"40%"`, `"40"`, `40`, `0.4` all mean 40%.
 * Returns null when there is nothing readable.
 */
export function parseProgress(value: unknown): string | null {
  if (typeof value === "number" && Number.isFinite(value)) {
    return progressText(value > 0 && value < 1 ? value * 100 : value);
  }
  if (typeof value === "string") {
    const m = /^\s*(\d+(?:\.\d+)?)\s*%?\s*$/.exec(value);
    if (m?.[1]) return progressText(Number(m[1]));
  }
  return null;
}
