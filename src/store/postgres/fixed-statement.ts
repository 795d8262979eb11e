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

/** A string element that must be escaped inside a quoted array element. */
const ESCAPED = /[\\"]/;

/**
 * A JS array as PostgreSQL's array literal (`{1,NULL,"text"}`), for arrays of numbers, strings,
 * booleans and nulls: what `pg` would send for it, made in one pass. `pg` converts each element
 * on its own (its text, then two regular-expression replaces and a quoted copy), which was 3 to 4%
 * of the gateway's CPU per request on PostgreSQL, where the ledger's batches and the request log
 * send their rows as arrays. Null for an array holding anything else (nested arrays, bytes,
 * dates, objects): `pg` converts those itself.
 */
export function arrayLiteral(values: readonly unknown[]): string | null {
  let text = "{";
  for (let i = 0; i < values.length; i++) {
    if (i > 0) text += ",";
    const value = values[i];
    if (value === null || value === undefined) text += "NULL";
    else if (typeof value === "number" || typeof value === "bigint") text += String(value);
    else if (typeof value === "string")
      text += ESCAPED.test(value) ? `"${value.replace(/[\\"]/g, "\\$&")}"` : `"${value}"`;
    else if (typeof value === "boolean") text += value ? "true" : "false";
    else return null;
  }
  return `${text}}`;
}

/** The parameters of a fixed statement, each array of plain values as its literal (see arrayLiteral). */
function withArrayLiterals(values: readonly unknown[]): unknown[] {
  return values.map((value) => (Array.isArray(value) ? (arrayLiteral(value) ?? value) : value));
}

/**
 * The store's PostgreSQL client: a statement whose text is one of the fixed ones is sent as a
 * named prepared statement (parsed and planned once per connection), its arrays as literals made
 * here; any other as before.
 */
export class PreparingClient extends pg.Client {
  override query(config: any, values?: any, callback?: any): any {
    if (typeof config === "string" && Array.isArray(values) && values.length > 0) {
      const name = NAMES.get(config);
      if (name !== undefined) return super.query({ name, text: config, values: withArrayLiterals(values) }, callback);
    }
    return super.query(config, values, callback);
  }
}
