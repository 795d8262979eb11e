import { CompiledQuery, type QueryResult } from "kysely";
import type { Executor } from "../ledger-statements.js";

// Statements of PostgreSQL's hot path whose text never changes: written once as SQL, their
// values bound as parameters (a batch's rows as arrays, unnested by the statement), so that
// nothing is built or compiled through the query builder per call.

/** A statement of fixed text: runs it on `db` with `parameters` ($1, $2, ... in order). */
export type FixedStatement<R> = (db: Executor, parameters: readonly unknown[]) => Promise<QueryResult<R>>;

export function fixedStatement<R>(text: string): FixedStatement<R> {
  return (db, parameters) => db.executeQuery<R>(CompiledQuery.raw(text, [...parameters]));
}
