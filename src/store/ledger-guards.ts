import { type RawBuilder, sql } from "kysely";

// The hold rule of core/ledger/charge-rules.ts (userAllows, tokenAllows) as SQL conditions on the
// row a take updates, written once here and rendered into every statement of both engines that
// takes quota: SQLite's prepared statements (the amount a `?`), PostgreSQL's fixed statements (a
// `$1::bigint`, a batch's `v.take`) and the query builder's steps inside a transaction (a bound
// value, see `boundGuard`). A settlement above its hold takes its excess by the same conditions,
// so no balance goes below minus its credit line on any path. `take` is the SQL of the amount.

/** A guard: the SQL condition, on the row being updated, that a take of `take` fits. */
export type TakeGuard = (take: string) => string;

/** userAllows on the users row: the balance stays at or above minus the user's credit line. */
export const userTakeFits: TakeGuard = (take) => `users.quota + users.credit_line >= ${take}`;

/** tokenAllows on the tokens row: the token's limit, if any, is not passed. */
export const tokenTakeFits: TakeGuard = (take) =>
  `(tokens.quota_limit is null or tokens.quota_limit - tokens.used_quota >= ${take})`;

/**
 * The guard where a take of nothing always fits, as a hold of zero takes nothing: for the
 * statements that move a row whatever its take (a batch's give-backs, a submit's hold of zero).
 */
export const orNothingTaken =
  (fits: TakeGuard): TakeGuard =>
  (take) =>
    `(${take} = 0 or ${fits(take)})`;

/** A character no guard's text holds: where the amount goes in `boundGuard`. */
const AMOUNT = "\u0000";

/** The guard with `amount` as a bound value, for the query builder (either dialect). */
export function boundGuard(fits: TakeGuard, amount: number): RawBuilder<boolean> {
  const [first = "", ...rest] = fits(AMOUNT).split(AMOUNT);
  let guard: RawBuilder<unknown> = sql.raw(first);
  for (const part of rest) guard = sql`${guard}${amount}${sql.raw(part)}`;
  return guard as RawBuilder<boolean>;
}
