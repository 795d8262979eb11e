import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";

/** The SQLite drivers the store runs on; which one is chosen by what the Node runtime offers. */
export type SqliteDriverName = "node:sqlite" | "better-sqlite3";

/** A prepared statement, the same on both drivers. Parameters are positional. */
export interface SqliteStatement {
  /** True when the statement returns rows (a select, or a write with `returning`). */
  readonly reader: boolean;
  run(...params: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  iterate(...params: unknown[]): IterableIterator<unknown>;
}

/** One SQLite connection, the part of it the store uses, the same on both drivers. */
export interface SqliteConnection {
  readonly driver: SqliteDriverName;
  readonly open: boolean;
  readonly inTransaction: boolean;
  prepare(sql: string): SqliteStatement;
  exec(sql: string): void;
  /** Runs `PRAGMA <text>` and returns its rows. */
  pragma(text: string): unknown[];
  /**
   * Wraps `fn` in a transaction: BEGIN and COMMIT (ROLLBACK when it throws), or, called inside a
   * transaction already, a savepoint that is rolled back alone when it throws.
   */
  transaction<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R;
  close(): void;
}

export interface SqliteOpenOptions {
  readonly?: boolean;
  fileMustExist?: boolean;
}

/** The part of `node:sqlite` used here (its types are not in the Node 20 type definitions). */
interface NodeStatement {
  columns(): unknown[];
  run(...params: never[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...params: never[]): unknown;
  all(...params: never[]): unknown[];
  iterate(...params: never[]): Iterator<unknown>;
}
interface NodeDatabase {
  readonly isTransaction: boolean;
  prepare(sql: string): NodeStatement;
  exec(sql: string): void;
  close(): void;
}
interface NodeSqlite {
  DatabaseSync: { new (file: string, options?: { readOnly?: boolean }): NodeDatabase; prototype: object };
  StatementSync: { prototype: { columns?: unknown } };
}

/**
 * The built-in driver, when this runtime has it complete (Node 22.16 and later: statements that
 * tell whether they return rows, connections that tell whether a transaction is open).
 */
let builtin: NodeSqlite | null | undefined;

function builtinSqlite(): NodeSqlite | null {
  if (builtin !== undefined) return builtin;
  builtin = null;
  try {
    const sqlite = process.getBuiltinModule?.("node:sqlite") as NodeSqlite | undefined;
    if (!sqlite || typeof sqlite.StatementSync.prototype.columns !== "function") return null;
    const probe = new sqlite.DatabaseSync(":memory:");
    const complete = typeof probe.isTransaction === "boolean";
    probe.close();
    if (complete) builtin = sqlite;
  } catch {
    // Not offered by this runtime (or only behind a flag).
  }
  return builtin;
}

/**
 * The built-in `node:sqlite` where the runtime offers it, better-sqlite3 elsewhere (Node 20).
 * better-sqlite3 12 aborts the process on Node 24.19 and later when a statement it created is
 * garbage-collected (its native wrapper unregisters a clean-up hook with no environment current),
 * which a long-running gateway cannot avoid; the built-in driver has no such wrapper.
 */
export function sqliteDriverName(): SqliteDriverName {
  return builtinSqlite() ? "node:sqlite" : "better-sqlite3";
}

const requireHere = createRequire(import.meta.url);

/** Opens `file` (or `:memory:`) with the driver this runtime uses. */
export function openSqlite(file: string, options: SqliteOpenOptions = {}): SqliteConnection {
  const builtin = builtinSqlite();
  if (builtin) return new NodeSqliteConnection(builtin, file, options);
  // Loaded only here: on a runtime with node:sqlite the native module is never loaded at all.
  const Database = requireHere("better-sqlite3") as typeof BetterSqlite3;
  return betterSqliteConnection(
    new Database(file, { readonly: options.readonly ?? false, fileMustExist: options.fileMustExist ?? false }),
  );
}

function betterSqliteConnection(db: BetterSqlite3.Database): SqliteConnection {
  return {
    driver: "better-sqlite3",
    get open() {
      return db.open;
    },
    get inTransaction() {
      return db.inTransaction;
    },
    prepare: (sql) => db.prepare(sql),
    exec: (sql) => void db.exec(sql),
    pragma: (text) => db.pragma(text) as unknown[],
    transaction: (fn) => db.transaction(fn),
    close: () => void db.close(),
  };
}

/** Kysely passes the parameters as one array; the statements here take them spread, like better-sqlite3. */
function positional(params: unknown[]): never[] {
  return (params.length === 1 && Array.isArray(params[0]) ? params[0] : params) as never[];
}

class NodeSqliteStatement implements SqliteStatement {
  readonly reader: boolean;

  constructor(private readonly statement: NodeStatement) {
    this.reader = statement.columns().length > 0;
  }

  run(...params: unknown[]) {
    return this.statement.run(...positional(params));
  }

  get(...params: unknown[]) {
    return this.statement.get(...positional(params));
  }

  all(...params: unknown[]) {
    return this.statement.all(...positional(params));
  }

  iterate(...params: unknown[]) {
    return this.statement.iterate(...positional(params)) as IterableIterator<unknown>;
  }
}

class NodeSqliteConnection implements SqliteConnection {
  readonly driver = "node:sqlite";
  private readonly db: NodeDatabase;
  private savepoints = 0;
  private closed = false;

  constructor(sqlite: NodeSqlite, file: string, options: SqliteOpenOptions) {
    if (options.fileMustExist && file !== ":memory:") {
      // node:sqlite has no such option: fail as better-sqlite3 does rather than create the file.
      const { existsSync } = requireHere("node:fs") as typeof import("node:fs");
      if (!existsSync(file)) throw new Error(`unable to open database file: ${file} does not exist`);
    }
    this.db = new sqlite.DatabaseSync(file, { readOnly: options.readonly ?? false });
  }

  get open() {
    return !this.closed;
  }

  get inTransaction() {
    return this.db.isTransaction;
  }

  prepare(sql: string): SqliteStatement {
    return new NodeSqliteStatement(this.db.prepare(sql));
  }

  exec(sql: string) {
    this.db.exec(sql);
  }

  pragma(text: string) {
    return this.db.prepare(`PRAGMA ${text}`).all();
  }

  transaction<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
    return (...args: A) => {
      if (!this.db.isTransaction) {
        this.db.exec("BEGIN");
        try {
          const result = fn(...args);
          this.db.exec("COMMIT");
          return result;
        } catch (error) {
          if (this.db.isTransaction) this.db.exec("ROLLBACK");
          throw error;
        }
      }
      const name = `sp_${++this.savepoints}`;
      this.db.exec(`SAVEPOINT ${name}`);
      try {
        const result = fn(...args);
        this.db.exec(`RELEASE ${name}`);
        return result;
      } catch (error) {
        // SQLite may have ended the whole transaction itself (disk full, I/O error).
        if (this.db.isTransaction) {
          this.db.exec(`ROLLBACK TO ${name}`);
          this.db.exec(`RELEASE ${name}`);
        }
        throw error;
      } finally {
        this.savepoints--;
      }
    };
  }

  close() {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }
}
