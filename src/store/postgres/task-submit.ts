import type { ChargeOpening } from "../../core/ledger/charge-rules.js";
import type { NewTask } from "../../core/tasks/ports.js";
import { orNothingTaken, tokenTakeFits, userTakeFits } from "../ledger-guards.js";
import { type Executor, ledgerValues, openChargeValues } from "../ledger-statements.js";
import type { OpeningMeta } from "../ledger-steps.js";
import { pgTaskInsert } from "../new-task-row.js";
import type { TaskRow } from "../task-reads.js";
import { fixedStatement } from "./fixed-statement.js";

/** The task's row: its user, token and time are the statement's $2, $3 and $4, its own values $13 on. */
const NEW_TASK = pgTaskInsert({ userId: 2, tokenId: 3, now: 4 }, 13);

/**
 * A task's whole submit on PostgreSQL as one statement, its own transaction: the user's count of
 * unfinished tasks and the hold's take on the user's row (one update), the take on the token's row,
 * the hold's ledger and charge rows, and the task's row as NOT_START, as the query builder's
 * transaction writes them. It fails as a whole (division by zero, SQLSTATE 22012) when the count or
 * a take is refused, having written nothing. So one user's submits wait for each other only for
 * one statement and its commit, where a transaction held the user's row over seven round trips.
 *
 * Parameters: $1 the amount taken, $2 the user, $3 the token, $4 now (unix seconds), $5 the limit
 * of unfinished tasks (0: none), $6 to $9 the ledger row (kind, amount, reference, note), $10 to
 * $12 the charge (held, close-by, instance), $13 to $23 the task.
 */
const SUBMIT_TASK = fixedStatement<TaskRow>(
  `with u as (
    update users set tasks_unfinished = users.tasks_unfinished + 1, quota = users.quota - $1::bigint,
      used_quota = users.used_quota + $1::bigint, updated_at = $4::bigint
    where users.id = $2::bigint and ($5::bigint = 0 or users.tasks_unfinished < $5::bigint)
      and ${orNothingTaken(userTakeFits)("$1::bigint")}
    returning users.id
  ), t as (
    update tokens set used_quota = tokens.used_quota + $1::bigint, updated_at = $4::bigint
    where tokens.id = $3::bigint and $1::bigint > 0 and ${orNothingTaken(tokenTakeFits)("$1::bigint")}
    returning tokens.id
  ), l as (
    insert into ledger (user_id, token_id, kind, amount, reference, note, created_at)
    values ($2::bigint, $3::bigint, $6::text, $7::bigint, $8::text, $9::text, $4::bigint)
    returning id
  ), c as (
    insert into charges (reference, user_id, token_id, state, held, seen, settled, close_by, instance, created_at, closed_at)
    values ($8::text, $2::bigint, $3::bigint, 'open', $10::bigint, null, null, $11::bigint, $12::text, $4::bigint, null)
    returning reference
  ), n as (
    ${NEW_TASK.sql}
    returning *
  )
  select n.* from n
  where 1 / (case when (select count(*) from u) = 1
    and ($1::bigint = 0 or $3::bigint is null or (select count(*) from t) = 1)
    and (select count(*) from l) = 1 and (select count(*) from c) = 1
    then 1 else 0 end) = 1`,
);

/** Runs SUBMIT_TASK for `task` with its hold `opening`; the task's row. Throws having written nothing. */
export async function submitTask(
  db: Executor,
  task: NewTask,
  opening: ChargeOpening,
  meta: OpeningMeta,
  unfinishedLimit: number,
  now: number,
): Promise<TaskRow> {
  const ledger = ledgerValues(opening.row, opening.row.reference, meta.note, now);
  const charge = openChargeValues(opening, meta, now);
  const res = await SUBMIT_TASK(db, [
    opening.take?.amount ?? 0,
    task.userId,
    task.tokenId,
    now,
    unfinishedLimit,
    ledger.kind,
    ledger.amount,
    ledger.reference,
    ledger.note,
    charge.held,
    charge.close_by,
    charge.instance,
    ...NEW_TASK.params(task, now),
  ]);
  const row = res.rows[0];
  if (!row) throw new Error("the submit statement returned no task");
  return row;
}
