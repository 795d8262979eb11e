import { CompiledQuery, type QueryResult } from "kysely";
import pg from "pg";
import type { Executor } from "../ledger-statements.js";

// Statements of PostgreSQL's hot path whose text never changes: written once as SQL, their
// values bound as parameters (a batch's rows as arrays, unnested by the statement), so that
// nothing is built or compiled through the query builder per call. The server prepares each once
// per connection, by name (see PreparingClient), instead of parsing and planning it on every call.

/**
 * A statement of fixed text: runs it on `db` with `parameters` ($1, $2, ... in order). Its `text`
 * is for a client used without the query builder (the ledger's pipelined connection).
 */
export type FixedStatement<R> = ((db: Executor, parameters: readonly unknown[]) => Promise<QueryResult<R>>) & {
  readonly text: string;
};

/** The name each fixed text is prepared under. */
const NAMES = new Map<string, string>();

export function fixedStatement<R>(text: string): FixedStatement<R> {
  if (!NAMES.has(text)) NAMES.set(text, `mg_fixed_${NAMES.size + 1}`);
  const run = (db: Executor, parameters: readonly unknown[]) =>
    db.executeQuery<R>(CompiledQuery.raw(text, [...parameters]));
  return Object.assign(run, { text });
}

/**
 * The store's PostgreSQL client: a statement whose text is one of the fixed ones is sent as a
 * named prepared statement (parsed and planned once per connection); any other as before.
 */
export class PreparingClient extends pg.Client {
  override query(config: any, values?: any, callback?: any): any {
    if (typeof config === "string" && Array.isArray(values) && values.length > 0) {
      const name = NAMES.get(config);
      if (name !== undefined) return super.query({ name, text: config, values }, callback);
    }
    return super.query(config, values, callback);
  }
}
