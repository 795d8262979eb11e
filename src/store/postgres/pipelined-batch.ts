import pg from "pg";
import { unixNow } from "../../core/ids.js";
import { batchesByReference } from "../../core/ledger/batch-rules.js";
import type { OpenCharge } from "../../core/ledger/charge-rules.js";
import { CLOSE_ALL, closeParameters, readClosed } from "./batch-statements.js";
import { GuardedRunNeeded, planTogether } from "./ledger-batch.js";
import type { LedgerOp, OpOutcome } from "./ledger-op.js";
import { togetherParameters, WRITE_TOGETHER } from "./together-statement.js";

/**
 * The bare run of a batch (see ledger-batch.ts) on a connection that pipelines: each statement is
 * sent without waiting for the answer to the one before.
 *
 * - A batch whose closings all close charges this instance opened (`known`: their user, token and
 *   hold) is one statement, WRITE_TOGETHER with those closes, its own transaction: one round trip.
 *   So is a batch of holds alone.
 * - Any other batch takes two: `begin` with the close of its charges (CLOSE_ALL, which reads them),
 *   then WRITE_TOGETHER with the commit.
 *
 * WRITE_TOGETHER fails as a whole when the batch does not go through together (a known charge no
 * longer open as expected, a refused hold): nothing of it is written, a commit behind it ends the
 * transaction as a rollback, and GuardedRunNeeded sends the batch to the guarded run, as the query
 * builder's bare run does.
 *
 * Returns null for a batch of more than one part (a reference named twice in it), which the query
 * builder's runs take.
 */
export async function runPipelined(
  pool: pg.Pool,
  ops: readonly LedgerOp[],
  known: ReadonlyMap<string, OpenCharge>,
): Promise<OpOutcome[] | null> {
  const items = ops.map((op) => ({ op, reference: op.reference }));
  if (batchesByReference(items).length > 1) return null;
  const client = await pool.connect();
  // Set when the connection's state is not known (an answer to `commit` or `rollback` lost): the
  // pool then drops the connection instead of handing it out again.
  let unknownState: Error | undefined;
  // A connection lost between two statements is reported on the client, not on a query.
  const lost = (err: Error) => {
    unknownState = err;
  };
  client.on("error", lost);
  try {
    const now = unixNow();
    const closings = items.filter(({ op }) => op.kind !== "hold");
    if (closings.every(({ reference }) => known.has(reference))) {
      // The batch's own charges only: `known` holds every charge the instance has open.
      const found = new Map(closings.map(({ reference }) => [reference, known.get(reference) as OpenCharge]));
      const plan = planTogether(items, found);
      try {
        await client.query(WRITE_TOGETHER.text, togetherParameters(plan.write, now, items, found));
      } catch (err) {
        // Refused by PostgreSQL: the statement wrote nothing. Any other failure (the connection
        // lost) leaves its outcome unknown, and the callers get the error.
        if (err instanceof pg.DatabaseError) throw new GuardedRunNeeded();
        unknownState = err as Error;
        throw err;
      }
      return plan.results.map((value) => ({ ok: true, value }));
    }
    const [begun, closed] = await Promise.allSettled([
      client.query("begin"),
      client.query(CLOSE_ALL.text, closeParameters(items, now) as unknown[]),
    ]);
    if (begun.status === "rejected" || closed.status === "rejected") {
      await client.query("rollback").catch((err: Error) => {
        unknownState = err;
      });
      throw new GuardedRunNeeded();
    }
    const plan = planTogether(items, readClosed(closed.value.rows));
    const [written, committed] = await Promise.allSettled([
      client.query(WRITE_TOGETHER.text, togetherParameters(plan.write, now, items, null)),
      client.query("commit"),
    ]);
    if (committed.status === "rejected") unknownState = committed.reason as Error;
    // Writes refused by PostgreSQL wrote nothing: the commit behind them was a rollback.
    if (written.status === "rejected" && written.reason instanceof pg.DatabaseError) throw new GuardedRunNeeded();
    // The writes' or the commit's answer lost: the outcome is not known, as when a commit of the
    // query builder's run fails, and the callers get the error.
    if (written.status === "rejected") throw written.reason;
    if (committed.status === "rejected") throw committed.reason;
    if (committed.value.command !== "COMMIT") throw new GuardedRunNeeded();
    return plan.results.map((value) => ({ ok: true, value }));
  } finally {
    client.off("error", lost);
    client.release(unknownState);
  }
}
