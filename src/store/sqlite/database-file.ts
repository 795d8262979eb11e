import fs from "node:fs";
import path from "node:path";

/** The most symbolic links followed from one name (Linux's own limit). */
const MAX_LINKS_FOLLOWED = 40;

/**
 * The one name of a SQLite database file: `file` made absolute with every symbolic link on the way
 * followed (its directories' and its own), so that every path to one file gives the same string.
 * The owner lock and the write-ahead log are named from that string. The file need not exist yet
 * (a first start): its directory is resolved, and a symbolic link to a file not yet created is
 * followed to where SQLite would create it.
 */
export function resolveDatabaseFile(file: string): string {
  let current = path.resolve(file);
  for (let followed = 0; followed <= MAX_LINKS_FOLLOWED; followed++) {
    const candidate = path.join(fs.realpathSync(path.dirname(current)), path.basename(current));
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(candidate);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return candidate;
      throw err;
    }
    if (!stat.isSymbolicLink()) return candidate;
    current = path.resolve(path.dirname(candidate), fs.readlinkSync(candidate));
  }
  throw Object.assign(new Error(`too many symbolic links from ${file}`), { code: "ELOOP" });
}

/** The files SQLite keeps for one database, each under the database's name plus a suffix. */
const PARTS = [
  { suffix: "", what: "database file" },
  { suffix: "-wal", what: "write-ahead log" },
  { suffix: "-shm", what: "shared-memory index" },
] as const;

/**
 * A SQLite database file (or its write-ahead log or index) that has more than one name. SQLite
 * names the write-ahead log and its index after the name the database was opened by, so a
 * process opening a second name (a hard link) keeps a log of its own beside the first one's, and
 * the two write over each other's pages: the database ends malformed.
 */
export class StoreLinkedError extends Error {
  override readonly name = "StoreLinkedError";
  constructor(
    /** The file found with more than one name (the database's one name, or its -wal or -shm). */
    readonly file: string,
    readonly links: number,
    readonly what: string,
    /** The path the store was asked to open, when it differs from the database's one name. */
    readonly given: string,
  ) {
    super(
      `the SQLite ${what} ${file}${given === file || what !== "database file" ? "" : ` (named as ${given})`} has ${links} hard links (other names for the same file); SQLite keeps a write-ahead log per name, so a second name corrupts the database: give it one name by removing the other links (\`find / -samefile ${file}\` lists them), or copy the file instead of linking it`,
    );
  }
}

/**
 * Refuses a database whose file, write-ahead log or index has a second name (see StoreLinkedError).
 * `file` is the database's one name (resolveDatabaseFile); files not there yet are fine. A
 * symbolic link in place of the log or its index SQLite refuses itself (it does not follow one).
 */
export function checkSingleName(file: string, given: string): void {
  for (const part of PARTS) {
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(`${file}${part.suffix}`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw err;
    }
    if (stat.nlink > 1) throw new StoreLinkedError(`${file}${part.suffix}`, stat.nlink, part.what, given);
  }
}
