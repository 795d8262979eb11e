/** The two audio task families, the upstream protocol serving each, and their actions. */
export const TASK_FAMILIES = ["audioa", "audiob"] as const;
export type TaskFamily = (typeof TASK_FAMILIES)[number];

export interface FamilySpec {
  /** Channel type (upstream protocol) that serves the family. */
  channelType: "task-relay" | "generate-record";
  /** Every action the family knows. */
  actions: readonly string[];
  /** Actions that stay closed until the operator names them in `tasks.enabledActions`. */
  closedByDefault: readonly string[];
  /** Model asked for when the request names none (`mv` for audioa, `model` for audiob). */
  defaultModel: string;
}

export const FAMILY_SPECS: Record<TaskFamily, FamilySpec> = {
  audioa: {
    channelType: "task-relay",
    actions: ["MUSIC", "REPLACE", "INSTRUMENTALS_SWAP"],
    closedByDefault: ["REPLACE", "INSTRUMENTALS_SWAP"],
    defaultModel: "chirp-v3-5",
  },
  audiob: {
    channelType: "generate-record",
    actions: ["MUSIC"],
    closedByDefault: [],
    defaultModel: "V4_5",
  },
};

export function isTaskFamily(word: string): word is TaskFamily {
  return (TASK_FAMILIES as readonly string[]).includes(word);
}

/** Whether an action of a family is open under the operator's `enabledActions` setting. */
export function isActionOpen(family: TaskFamily, action: string, enabledActions: readonly string[]): boolean {
  const spec = FAMILY_SPECS[family];
  if (!spec.actions.includes(action)) return false;
  if (!spec.closedByDefault.includes(action)) return true;
  return enabledActions.includes(action) || enabledActions.includes(`${family}:${action}`);
}
