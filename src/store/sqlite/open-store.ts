import fs from "node:fs";
import path from "node:path";
import { Kysely, type SqliteDatabase, SqliteDialect } from "kysely";
import type { Database } from "../schema.js";
import { openSqlite, type SqliteConnection, type SqliteStatement } from "./connection.js";
import { checkSingleName, resolveDatabaseFile } from "./database-file.js";
import { GroupCommit } from "./group-commit.js";
import { lockSqliteStore, type OwnerLock } from "./owner-lock.js";
import { WalCheckpointer } from "./wal-checkpointer.js";

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

/** An open SQLite store: the query builder, the handle itself and its group commits. */
export interface SqliteStore {
  db: Kysely<Database>;
  dialect: "sqlite";
  sqlite: SqliteConnection;
  commits: GroupCommit;
  close(): Promise<void>;
  ping(): Promise<boolean>;
}

/**
 * The path a store opens `given` by: its one name (every symbolic link followed), refused when the
 * file has a second name (a hard link), whose write-ahead log SQLite would keep apart.
 */
function databaseFile(given: string): string {
  if (given === ":memory:") return given;
  fs.mkdirSync(path.dirname(path.resolve(given)), { recursive: true });
  const file = resolveDatabaseFile(given);
  checkSingleName(file, path.resolve(given));
  return file;
}

/**
 * Opens (and creates) a SQLite store in WAL mode: `owner` makes this process the file's only
 * owner; checkpoints run on a thread of their own (an in-memory database has no write-ahead log).
 * Every connection opens the file by its one name, so its write-ahead log is the same whatever
 * path reached it; admin commands (not owners) are held to that too.
 */
export function openSqliteStore(given: string, options: { owner: boolean; busyTimeoutMs: number }): SqliteStore {
  const file = databaseFile(given);
  const lock: OwnerLock | null =
    options.owner && file !== ":memory:" ? lockSqliteStore(file, path.resolve(given)) : null;
  let sqlite: SqliteConnection;
  try {
    sqlite = openSqlite(file);
    sqlite.pragma(`busy_timeout = ${options.busyTimeoutMs}`);
  } catch (err) {
    lock?.release();
    throw err;
  }
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("foreign_keys = ON");
  // Checkpoints run on a thread of their own; the main connection only finishes them (see
  // WalCheckpointer).
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
