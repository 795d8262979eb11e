import { createHash, randomFillSync } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Random bytes drawn from the system in blocks: one call to the system for many ids. */
const entropy = { pool: Buffer.alloc(4096), used: 4096 };
function randomByte(): number {
  if (entropy.used === entropy.pool.length) {
    randomFillSync(entropy.pool);
    entropy.used = 0;
  }
  return entropy.pool[entropy.used++] as number;
}

/**
 * Uniformly random base62 text (rejection sampling, no modulo bias), its bytes taken from the
 * block of system randomness above.
 */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const b = randomByte();
    if (b < 248) out += BASE62[b % 62];
  }
  return out;
}

/** Characters of a task id's time: milliseconds in base62, enough until the year 8888. */
const TASK_TIME_CHARS = 8;

/** The Unix milliseconds `ms` as fixed-width base62, which sorts as the numbers do. */
function base62Time(ms: number): string {
  let out = "";
  let rest = ms;
  for (let i = 0; i < TASK_TIME_CHARS; i++) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

/**
 * A task's public id: the prefix, then 32 base62 characters, of which the first 8 are the time in
 * milliseconds and the other 24 random (142 bits, so ids stay unguessable). Ids made one after
 * another sort one after another, so the unique indexes they key (the task's, and the ledger's
 * and the charge's through the task's reference) grow at their end: a commit of many submits
 * writes a few pages there instead of one page per submit at random places.
 */
export function newTaskId(prefix = "task"): string {
  return `${prefix}_${base62Time(Date.now())}${randomBase62(32 - TASK_TIME_CHARS)}`;
}

/**
 * The task id of an Idempotency-Key's run: every attempt of the run names the same task, so a
 * retry after a dead instance finds the task (and its charge) instead of making a second one.
 * Derived by hash from the run id, which is random and never shown.
 */
export function taskIdOfRun(runId: string, prefix = "task"): string {
  const digest = createHash("sha256").update(`task-of-run:${runId}`).digest();
  let value = BigInt(`0x${digest.toString("hex")}`);
  let out = "";
  for (let i = 0; i < 32; i++) {
    out += BASE62[Number(value % 62n)];
    value /= 62n;
  }
  return `${prefix}_${out}`;
}

export function newTokenKey(): string {
  return `sk-${randomBase62(48)}`;
}

export function newAdminKey(): string {
  return `adm-${randomBase62(48)}`;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/**
 * The time and counter of the last id made (RFC 9562, 6.2 method 1: a 12-bit counter per
 * millisecond), and the id's first two groups, which only change with the time.
 */
const clock = { ms: 0, counter: 0, prefix: "" };

function setClock(ms: number): void {
  const time = ms.toString(16).padStart(12, "0");
  clock.ms = ms;
  clock.prefix = `${time.slice(0, 8)}-${time.slice(8)}-`;
}

/**
 * A request id: a UUID of version 7 (RFC 9562), whose leading 48 bits are the Unix time in
 * milliseconds and the next 12 a counter within the millisecond, so that ids made one after
 * another sort one after another; 62 random bits follow. Ledger references are built from them,
 * and the ledger's index on references then grows at its end instead of at random places: fewer
 * pages written per commit than with random ids.
 */
export function newRequestId(): string {
  const now = Date.now();
  if (now > clock.ms) {
    setClock(now);
    // A random start within the lower half leaves room to count up within the millisecond.
    clock.counter = ((randomByte() << 8) | randomByte()) & 0x7ff;
  } else if (++clock.counter > 0xfff) {
    // More than the counter holds in one millisecond: borrow the next millisecond.
    setClock(clock.ms + 1);
    clock.counter = 0;
  }
  const counter = clock.counter;
  const variant = HEX[0x80 | (randomByte() & 0x3f)] as string;
  let node = "";
  for (let i = 0; i < 6; i++) node += HEX[randomByte()];
  return `${clock.prefix}${HEX[0x70 | (counter >> 8)]}${HEX[counter & 0xff]}-${variant}${HEX[randomByte()]}-${node}`;
}

export function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}
