import { callGateway } from "../../test/reliability/harness.js";
import type { Child } from "./processes.js";
import type { TaskState } from "./store-checks.js";

/** One task a client submitted, and the prompt marker that decides its fate at the simulator. */
export interface Submission {
  index: number;
  family: "audioa" | "audiob";
  /** The action submitted: MUSIC or LYRICS in the task phase (whose prompt carries the marker), any in the action phase. */
  action: string;
  marker: "" | "[fail]" | "[refuse]";
  key: string;
}

/** What the client was answered. */
export interface Outcome {
  submission: Submission;
  status: number;
  taskId: string | null;
  code: string;
  /** The answer came from the instance the run killed (its send may have been cut after the answer). */
  fromKilledInstance?: boolean;
}

/** The reason the unsent sweeper writes when a task's sender died between its answer and its send. */
export const UNSENT_REASON = "the task was not sent to the upstream in time";

/**
 * What every client was told must match what the store holds: every submit was answered with a
 * task id (the send to the upstream follows the answer), whose task ended as its marker says: a
 * refused or failed one as FAILURE, the others as SUCCESS. A task answered by the instance the run
 * killed may instead have ended FAILURE by the unsent sweeper (its sender died before the send).
 */
export function outcomeViolations(outcomes: Outcome[], rows: Map<string, TaskState>): string[] {
  const violations: string[] = [];
  for (const o of outcomes) {
    const { marker, index } = o.submission;
    if (o.status !== 200 || !o.taskId) {
      violations.push(`submit ${index}: ${o.status} ${o.code}`);
      continue;
    }
    const row = rows.get(o.taskId);
    const expected = marker === "" ? "SUCCESS" : "FAILURE";
    const cutAfterAnswer =
      o.fromKilledInstance === true && row?.status === "FAILURE" && row.fail_reason === UNSENT_REASON;
    if (!row) violations.push(`${o.taskId}: answered to the client but not in the store`);
    else if (row.status !== expected && !cutAfterAnswer) {
      violations.push(`${o.taskId}: ${row.status} (${row.fail_reason}), expected ${expected}`);
    }
  }
  return violations;
}

/** The batch fetch of every instance returns each owner all their tasks, with the stored status. */
export async function fetchViolations(
  outcomes: Outcome[],
  users: Array<{ key: string }>,
  rows: Map<string, TaskState>,
  gateways: Child[],
): Promise<string[]> {
  const violations: string[] = [];
  for (const user of users) {
    const mine = outcomes.filter((o) => o.submission.key === user.key && o.taskId);
    for (const family of ["audioa", "audiob"] as const) {
      const ids = mine.filter((o) => o.submission.family === family).map((o) => o.taskId as string);
      for (let i = 0; i < ids.length; i += 100) {
        const g = gateways[(i / 100) % gateways.length] as Child;
        const res = await callGateway(g.url, "POST", `/${family}/fetch`, {
          headers: { authorization: `Bearer ${user.key}` },
          body: { ids: ids.slice(i, i + 100) },
        });
        const records: Array<{ task_id: string; status: string }> = res.body?.data ?? [];
        for (const record of records) {
          if (rows.get(record.task_id)?.status !== record.status) violations.push(`${record.task_id}: fetch disagrees`);
        }
        if (records.length !== Math.min(100, ids.length - i)) violations.push(`${g.name}: batch fetch lost records`);
      }
    }
  }
  return violations;
}

/** No line printed by any process of the run holds a secret. */
export function secretViolations(children: Child[], secrets: string[]): string[] {
  const violations: string[] = [];
  for (const child of children) {
    for (const line of child.lines) {
      if (secrets.some((s) => line.includes(s))) violations.push(`${child.name} logged a secret`);
    }
  }
  return violations;
}
