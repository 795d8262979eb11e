import { randomUUID } from "node:crypto";
import { isStoreBusy } from "../../core/store-busy.js";
import { openSqlite, type SqliteConnection } from "./connection.js";

/** Another live process serves from this SQLite file. */
export class StoreOwnedError extends Error {
  override readonly name = "StoreOwnedError";
  constructor(
    readonly file: string,
    readonly ownerPid: number | null,
    /** The path this process was given, when it differs from the file's one name. */
    readonly given: string = file,
  ) {
    super(
      `the SQLite store ${file}${given === file ? "" : ` (named as ${given})`} is in use by another gateway process (${ownerPid === null ? "pid unknown" : `pid ${ownerPid}`}); only one process may serve from one SQLite file: stop it first, or give this one another DATA_DIR`,
    );
  }
}

/** A held ownership of a SQLite file; `release` gives it up (the OS does so at any exit too). */
export interface OwnerLock {
  readonly path: string;
  release(): void;
}

function ownerPid(db: SqliteConnection): number | null {
  try {
    const row = db.prepare("select pid from owner").get() as { pid: number } | undefined;
    return row ? Number(row.pid) : null;
  } catch {
    // The owner is between its first write and its hold, or the table is not there yet.
    return null;
  }
}

/**
 * Makes this process the only one serving from the SQLite file `file`, its one name
 * (resolveDatabaseFile: every symbolic link followed; a file with a second name, a hard link, is
 * refused before this), so that every path to the file finds this one lock. The lock is the operating
 * system's own (a POSIX advisory lock, taken through SQLite on `<file>.lock`): the holder keeps a
 * write transaction open on that small database for as long as it runs, and the operating system
 * drops the lock when the process ends, however it ends, so a crashed owner never blocks a
 * restart. The holder's pid is written there first, and a refused process reads it to name the
 * owner. Throws StoreOwnedError when another process (or another store in this process) holds it.
 */
export function lockSqliteStore(file: string, given: string = file): OwnerLock {
  const path = `${file}.lock`;
  const db = openSqlite(path);
  const token = randomUUID();
  try {
    db.pragma("busy_timeout = 0");
    db.pragma("journal_mode = DELETE");
    // A process that slips in between the two steps below makes this one go round again.
    for (let round = 0; round < 5; round++) {
      try {
        db.exec("begin immediate");
      } catch (err) {
        if (!isStoreBusy(err)) throw err;
        throw new StoreOwnedError(file, ownerPid(db), given);
      }
      db.exec("create table if not exists owner (pid integer not null, token text not null, since integer not null)");
      db.exec("delete from owner");
      db.prepare("insert into owner (pid, token, since) values (?, ?, ?)").run(process.pid, token, Date.now());
      db.exec("commit");
      // The hold: a write transaction that stays open. Readers (a refused process) still read the pid.
      try {
        db.exec("begin immediate");
      } catch (err) {
        if (!isStoreBusy(err)) throw err;
        continue;
      }
      const row = db.prepare("select token from owner").get() as { token: string } | undefined;
      if (row?.token === token) {
        return {
          path,
          release() {
            if (!db.open) return;
            try {
              db.exec("delete from owner");
              db.exec("commit");
            } finally {
              db.close();
            }
          },
        };
      }
      db.exec("rollback");
    }
    throw new StoreOwnedError(file, ownerPid(db), given);
  } catch (err) {
    if (db.open) db.close();
    throw err;
  }
}
