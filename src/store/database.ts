import fs from "node:fs";
import path from "node:path";
import { Kysely, PostgresDialect, type SqliteDatabase, SqliteDialect } from "kysely";
import pg from "pg";
import { GroupCommit } from "./group-commit.js";
import { lockSqliteStore, type OwnerLock } from "./owner-lock.js";
import type { Database } from "./schema.js";
import { openSqlite, type SqliteConnection, type SqliteStatement } from "./sqlite-connection.js";
import { WalCheckpointer } from "./wal-checkpointer.js";

export type Dialect = "sqlite" | "postgres";

export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  close(): Promise<void>;
  /** The SQLite handle itself (SQLite only), for the ledger's synchronous fast path. */
  sqlite?: SqliteConnection;
  /**
   * SQLite only: stand-alone writes (ledger operations, request-log rows) asked for in one turn
   * of the event loop share one transaction (see GroupCommit).
   */
  commits?: GroupCommit;
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

const STATEMENT_CACHE_SIZE = 1000;
/** How often the checkpoint thread copies the write-ahead log into the database file. */
const CHECKPOINT_INTERVAL_MS = 100;
/**
 * Log size (pages of 4 KiB) at which the main connection checkpoints by itself: by then the
 * checkpoint thread has copied nearly every page, so this only finishes the round (SQLite's own
 * default is 1,000 pages, every one of them copied by the committing connection).
 */
const MAIN_CHECKPOINT_PAGES = 4000;

/**
 * The SQLite connection behind Kysely, with prepared statements kept per SQL text: Kysely prepares every
 * query anew, and preparing costs more than running most of the gateway's statements. Kysely
 * runs one query at a time on this connection, so a cached statement is never used twice at once.
 */
function cachingSqlite(db: SqliteConnection): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => db.close(),
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (statement) return statement;
      statement = db.prepare(sql);
      if (cache.size >= STATEMENT_CACHE_SIZE) {
        const oldest = cache.keys().next().value;
        if (oldest !== undefined) cache.delete(oldest);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
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
    const file = databaseUrl.slice("sqlite:".length);
    if (file !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const lock: OwnerLock | null = options.owner && file !== ":memory:" ? lockSqliteStore(path.resolve(file)) : null;
    let sqlite: SqliteConnection;
    try {
      sqlite = openSqlite(file);
      sqlite.pragma(`busy_timeout = ${options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS}`);
    } catch (err) {
      lock?.release();
      throw err;
    }
    sqlite.pragma("journal_mode = WAL");
    sqlite.pragma("synchronous = NORMAL");
    sqlite.pragma("foreign_keys = ON");
    // Checkpoints run on a thread of their own; the main connection only finishes them (see
    // WalCheckpointer). An in-memory database has no write-ahead log.
    const checkpointer = file === ":memory:" ? null : new WalCheckpointer(file, CHECKPOINT_INTERVAL_MS);
    if (checkpointer) sqlite.pragma(`wal_autocheckpoint = ${MAIN_CHECKPOINT_PAGES}`);
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: cachingSqlite(sqlite) }) });
    // A batch runs while it holds the store's only connection, so that no transaction of the
    // query builder is open around it.
    const commits = new GroupCommit(sqlite, (fn) => db.connection().execute(async () => fn()));
    return {
      db,
      dialect: "sqlite",
      sqlite,
      commits,
      close: async () => {
        await checkpointer?.stop();
        await db.destroy();
        // Kysely closes the handle only if it ever ran a query; the store opened it either way.
        if (sqlite.open) sqlite.close();
        lock?.release();
      },
      ping: async () => {
        try {
          sqlite.prepare("select 1").get();
          return true;
        } catch {
          return false;
        }
      },
    };
  }
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.poolSize ?? 10,
    types: pgTypes(),
    connectionTimeoutMillis: 5000,
  });
  // An idle client that loses its connection must not crash the process.
  pool.on("error", () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: "postgres",
    close: () => db.destroy(),
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
