/**
 * The money rules, checked over rows read from the store: every task charged exactly once, every
 * failed task refunded exactly once and in full, no succeeded task refunded, no call both refunded
 * and settled, and every balance equal to the sum of its ledger rows. Pure functions over plain
 * rows, so tests (through Kysely) and scripts (through pg) share them.
 */

export interface LedgerRow {
  user_id: number;
  kind: string;
  amount: number;
  reference: string;
}

export interface TaskRowForCheck {
  task_id: string;
  user_id: number;
  status: string;
  quota: number;
}

export interface UserRowForCheck {
  id: number;
  quota: number;
}

export interface LedgerFigures {
  tasks: number;
  succeeded: number;
  failed: number;
  unfinished: number;
  refunds: number;
  /** Tasks with exactly one charge row, of the task's quota. */
  chargedOnce: number;
  /** Failed tasks with exactly one refund row. */
  failedRefundedOnce: number;
  /** Succeeded tasks with a refund row (must be 0). */
  succeededRefunded: number;
  users: number;
  /** Users whose balance equals the sum of their ledger rows. */
  balancesMatching: number;
  violations: string[];
}

const TERMINAL = new Set(["SUCCESS", "FAILURE"]);

/** Checks the rules; `violations` lists each broken rule once per offending row. */
export function checkLedger(
  users: UserRowForCheck[],
  ledger: LedgerRow[],
  tasks: TaskRowForCheck[],
  options: { requireTerminal?: boolean } = {},
): LedgerFigures {
  const violations: string[] = [];
  const byReference = new Map<string, LedgerRow[]>();
  const sums = new Map<number, number>();
  for (const row of ledger) {
    const list = byReference.get(row.reference);
    if (list) list.push(row);
    else byReference.set(row.reference, [row]);
    sums.set(Number(row.user_id), (sums.get(Number(row.user_id)) ?? 0) + Number(row.amount));
  }

  const count = (rows: LedgerRow[] | undefined, kind: string) => (rows ?? []).filter((r) => r.kind === kind);
  for (const [reference, rows] of byReference) {
    for (const kind of new Set(rows.map((r) => r.kind))) {
      const n = count(rows, kind).length;
      if (n > 1) violations.push(`${reference}: ${n} ledger rows of kind ${kind}`);
    }
    if (count(rows, "refund").length > 0 && count(rows, "settle").length > 0) {
      violations.push(`${reference}: both refunded and settled`);
    }
    const charge = count(rows, "charge")[0];
    const refund = count(rows, "refund")[0];
    if (refund && !charge) violations.push(`${reference}: refunded without a charge`);
    if (refund && charge && Number(refund.amount) !== -Number(charge.amount)) {
      violations.push(`${reference}: refund ${refund.amount} does not match charge ${charge.amount}`);
    }
  }

  let succeeded = 0;
  let failed = 0;
  let unfinished = 0;
  let refunds = 0;
  let chargedOnce = 0;
  let failedRefundedOnce = 0;
  let succeededRefunded = 0;
  let balancesMatching = 0;
  for (const task of tasks) {
    const rows = byReference.get(`task:${task.task_id}`);
    const charges = count(rows, "charge");
    const taskRefunds = count(rows, "refund");
    refunds += taskRefunds.length;
    if (charges.length !== 1) violations.push(`${task.task_id}: ${charges.length} charge rows`);
    else if (Number(charges[0]?.amount) !== -Number(task.quota)) {
      violations.push(`${task.task_id}: charge ${charges[0]?.amount} is not the task's quota ${task.quota}`);
    } else chargedOnce += 1;
    if (!TERMINAL.has(task.status)) {
      unfinished += 1;
      if (options.requireTerminal) violations.push(`${task.task_id}: still ${task.status}`);
      if (taskRefunds.length > 0) violations.push(`${task.task_id}: refunded while ${task.status}`);
    } else if (task.status === "SUCCESS") {
      succeeded += 1;
      if (taskRefunds.length > 0) {
        succeededRefunded += 1;
        violations.push(`${task.task_id}: succeeded but refunded`);
      }
    } else {
      failed += 1;
      if (taskRefunds.length !== 1) violations.push(`${task.task_id}: failed with ${taskRefunds.length} refunds`);
      else failedRefundedOnce += 1;
    }
  }

  for (const user of users) {
    const sum = sums.get(Number(user.id)) ?? 0;
    if (Number(user.quota) !== sum) violations.push(`user ${user.id}: balance ${user.quota} != ledger sum ${sum}`);
    else balancesMatching += 1;
  }
  return {
    tasks: tasks.length,
    succeeded,
    failed,
    unfinished,
    refunds,
    chargedOnce,
    failedRefundedOnce,
    succeededRefunded,
    users: users.length,
    balancesMatching,
    violations,
  };
}
