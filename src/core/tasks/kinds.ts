import { TASK_FAMILIES, type TaskPlatform } from "./families.js";
import { clipEditKinds } from "./kinds/clip-edits.js";
import { clipExportKinds } from "./kinds/clip-exports.js";
import { MUSIC_KINDS } from "./kinds/music.js";
import { newMaterialKinds } from "./kinds/new-material.js";
import { VIDEO_KINDS } from "./kinds/video.js";
import type { TaskKind } from "./task-kind.js";

export type { KindResults, TaskKind } from "./task-kind.js";

/**
 * Every kind of task, by family: MUSIC (and audioa's closed edits) first, then the further
 * actions, the same for both families, then the video kinds. Which kinds a channel can do is its adapter's `kinds`.
 */
export const TASK_KINDS: readonly TaskKind[] = [
  ...MUSIC_KINDS,
  ...TASK_FAMILIES.flatMap((family) => [
    ...newMaterialKinds(family),
    ...clipEditKinds(family),
    ...clipExportKinds(family),
  ]),
  ...VIDEO_KINDS,
];

/** `family:ACTION`, the name of a kind in adapters and settings. */
export function kindName(kind: { family: string; action: string }): string {
  return `${kind.family}:${kind.action}`;
}

/** The kind of a family's action, or undefined when the family has no such action. */
export function findKind(family: string, action: string): TaskKind | undefined {
  return TASK_KINDS.find((k) => k.family === family && k.action === action);
}

/** The kinds of one family, in registry order. */
export function kindsOf(family: TaskPlatform): TaskKind[] {
  return TASK_KINDS.filter((k) => k.family === family);
}

/** Whether a kind is open under the operator's `enabledActions` setting. */
export function isKindOpen(kind: TaskKind, enabledActions: readonly string[]): boolean {
  if (!kind.closedByDefault) return true;
  return enabledActions.includes(kind.action) || enabledActions.includes(kindName(kind));
}
