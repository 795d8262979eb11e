import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { PreparingClient } from "./postgres/fixed-statement.js";
import type { Database } from "./schema.js";
import type { SqliteConnection } from "./sqlite/connection.js";
import type { GroupCommit } from "./sqlite/group-commit.js";
import { openSqliteStore } from "./sqlite/open-store.js";

export type Dialect = "sqlite" | "postgres";

export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  close(): Promise<void>;
  /** The SQLite handle itself (SQLite only), for the ledger's engine on SQLite. */
  sqlite?: SqliteConnection;
  /**
   * SQLite only: stand-alone writes (ledger operations, request-log rows) asked for in one turn
   * of the event loop share one transaction (see GroupCommit).
   */
  commits?: GroupCommit;
  /**
   * PostgreSQL only: one connection whose statements are pipelined (sent without waiting for the
   * answer to the one before), for the bare runs of the ledger's group commit.
   */
  ledgerPool?: pg.Pool;
  /** True when the store answers a trivial query. */
  ping(): Promise<boolean>;
}

/** 64-bit integers (balances, ids) come back as numbers; they stay far below 2^53. */
function pgTypes() {
  const types = pg.types;
  return {
    getTypeParser(oid: number, format?: "text" | "binary") {
      if (oid === 20 /* int8 */) return (v: string) => Number(v);
      if (oid === 1700 /* numeric */) return (v: string) => Number(v);
      return types.getTypeParser(oid, format);
    },
  } as pg.CustomTypesConfig;
}

export interface StoreOptions {
  poolSize?: number;
  /**
   * SQLite: this process becomes the file's only owner (a gateway serving, a migration): a second
   * owner is refused with StoreOwnedError naming the first one's pid. Short-lived admin commands
   * open the file without it.
   */
  owner?: boolean;
  /** SQLite: how long a write waits for another process's write to end before SQLITE_BUSY (ms). */
  busyTimeoutMs?: number;
}

/** Default wait for a write lock held by another process (an admin command) on SQLite. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

export function openStore(databaseUrl: string, options: StoreOptions = {}): Store {
  if (databaseUrl.startsWith("sqlite:")) {
    return openSqliteStore(databaseUrl.slice("sqlite:".length), {
      owner: options.owner ?? false,
      busyTimeoutMs: options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS,
    });
  }
  const settings = {
    connectionString: databaseUrl,
    types: pgTypes(),
    connectionTimeoutMillis: 5000,
    // The hot path's statements of fixed text are prepared once per connection.
    Client: PreparingClient,
  };
  const pool = new pg.Pool({ ...settings, max: options.poolSize ?? 10 });
  // The ledger's group commit has one batch under way at a time: one connection.
  const ledgerPool = new pg.Pool({ ...settings, max: 1, pipeline: true });
  // An idle client that loses its connection must not crash the process.
  pool.on("error", () => {});
  ledgerPool.on("error", () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: "postgres",
    ledgerPool,
    close: async () => {
      await db.destroy();
      await ledgerPool.end();
    },
    ping: async () => {
      try {
        await pool.query("select 1");
        return true;
      } catch {
        return false;
      }
    },
  };
}
