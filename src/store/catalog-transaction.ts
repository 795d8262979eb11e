import { sql } from "kysely";
import { Channels } from "./channels.js";
import type { Store } from "./database.js";
import { PriceBook } from "./prices.js";

/** Arbitrary constant naming the catalog lock on PostgreSQL. */
const CATALOG_LOCK = 7_311_052_019;

/**
 * Runs `fn` over the prices and channels in one transaction. On PostgreSQL a transaction-scoped
 * advisory lock makes instances that start together write the catalog one after the other (SQLite
 * has one writer anyway).
 */
export function inCatalogTransaction<T>(
  store: Store,
  fn: (catalog: { prices: PriceBook; channels: Channels }) => Promise<T>,
): Promise<T> {
  return store.db.transaction().execute(async (trx) => {
    if (store.dialect === "postgres") await sql`select pg_advisory_xact_lock(${CATALOG_LOCK})`.execute(trx);
    return fn({ prices: new PriceBook(trx), channels: new Channels(trx) });
  });
}
