// The hold's rules (core/ledger/charge-rules.ts: userAllows, tokenAllows) as SQL conditions on the
// row being updated, for the statements that take a hold in PostgreSQL itself: the ledger's batch
// writes and a task's submit. `take` is the SQL of the amount taken.

/** A user's row takes `take` when it stays at or above minus the user's credit line. */
export const userTakeFits = (take: string) => `(${take} = 0 or users.quota + users.credit_line >= ${take})`;

/** A token's row counts `take` when its limit, if any, is not passed. */
export const tokenTakeFits = (take: string) =>
  `(${take} = 0 or tokens.quota_limit is null or tokens.quota_limit - tokens.used_quota >= ${take})`;
