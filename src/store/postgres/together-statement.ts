import type { OpenCharge } from "../../core/ledger/charge-rules.js";
import {
  type BatchWrite,
  closingColumns,
  WRITE_CTES,
  WRITE_ROWS,
  type WrittenRow,
  writeParameters,
} from "./batch-statements.js";
import { fixedStatement } from "./fixed-statement.js";
import type { LedgerOp } from "./ledger-op.js";

/**
 * A batch's writes (WRITE_CTES), together with the close of the charges whose rows the caller
 * already knows (parameters $20 to $26: each closing's reference, state, settled amount, reason,
 * and the user, token and hold it expects the charge to have), in one statement that fails as a
 * whole (division by zero, SQLSTATE 22012) unless the batch goes through together: every known
 * charge found open with the expected rows and closed, every hold's charge and ledger row written,
 * every user's and token's sum moved. A statement is its own transaction, so that such a batch
 * needs neither `begin` nor `commit`, and one that does not go through together changes nothing
 * (pipelined-batch.ts then runs it guarded). With no known closings it is the writes alone.
 */
export const WRITE_TOGETHER = fixedStatement<WrittenRow>(
  `with k as (
    update charges set state = v.state, settled = v.settled, close_reason = v.reason, closed_at = $19::bigint
    from unnest($20::text[], $21::text[], $22::bigint[], $23::text[], $24::bigint[], $25::bigint[], $26::bigint[])
      as v(reference, state, settled, reason, user_id, token_id, held)
    where charges.reference = v.reference and charges.state = 'open' and charges.user_id = v.user_id
      and charges.token_id is not distinct from v.token_id and charges.held = v.held
    returning charges.reference
  ), ${WRITE_CTES}
  ${WRITE_ROWS}
  union all select 'refused', null, null
  where 1 / (case when (select count(*) from k) = cardinality($20::text[])
    and (select count(*) from u) = cardinality($13::bigint[])
    and (select count(*) from t) = cardinality($16::bigint[])
    and (select count(*) from c where c.reference in (select l.reference from l where l.kind = 'charge'))
      = cardinality($7::text[])
    then 1 else 0 end) = 0`,
);

/**
 * WRITE_TOGETHER's parameters: the writes, and the closings among `items` with the charges the
 * caller knows them to close (`known`, one for each), or none (`known` null: the closings were
 * closed before, by CLOSE_ALL).
 */
export function togetherParameters(
  write: BatchWrite,
  now: number,
  items: readonly { op: LedgerOp }[],
  known: ReadonlyMap<string, OpenCharge> | null,
): unknown[] {
  const { references, states, settled, reasons } = known ? closingColumns(items) : closingColumns([]);
  const charges = references.map((reference) => known?.get(reference) as OpenCharge);
  return [
    ...writeParameters(write, now),
    references,
    states,
    settled,
    reasons,
    charges.map((c) => c.userId),
    charges.map((c) => c.tokenId),
    charges.map((c) => c.held),
  ];
}
