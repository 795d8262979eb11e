/**
 * Blanking a channel key out of text an upstream sent back. Upstreams echo credentials in more
 * shapes than one, and often only in part: a key masked in its middle (`sk-proj-abcd****wxyz12`)
 * still shows a dozen of its characters. Every run of 8 characters of the key (the whole key when
 * it is shorter) is blanked, in every shape it is found in: as it is, spaced out or split by line
 * breaks, URL-encoded (some characters or all), JSON-escaped (`\u0073`), in hex, in base64 or
 * base64url (at any alignment inside a longer encoded string). A masked copy loses its tail too.
 *
 * The text is read once into a view of bytes, with gaps dropped and escapes decoded, each byte
 * remembering where in the text it came from. A window slides along the view, read as it is, as
 * hex and as base64, and looks its rolling hash up among the hashes of the key's runs in that
 * shape; only a hash found is compared byte for byte, and no string is made per window. It runs on
 * error text only: on a busy two-core machine, about 12 µs for a one-line message and 150 µs for
 * 4,000 characters, the most of an upstream message that is read.
 */

const REDACTED = "[redacted]";
/** Shorter secrets are not scrubbed: their copies would match ordinary words. */
const MIN_SECRET_LENGTH = 4;
/** Characters of a key that make a piece worth blanking: 8 of a random base62 key are some 48 bits. */
const RUN = 8;

/** A polynomial hash in 32-bit integers (wrapping), rolled along a view one byte at a time. */
const BASE = 257;
/** Hashes kept in a run set's filter: one byte per slot, looked at before the map. */
const FILTER_SLOTS = 4096;

/** Runs of one length to look for, by their hash. */
interface RunSet {
  length: number;
  byHash: Map<number, string[]>;
  /** 1 where some run's hash falls (hash modulo FILTER_SLOTS): most windows stop there. */
  filter: Uint8Array;
  /** BASE to the power length - 1: the weight of the byte leaving the window. */
  top: number;
}

/** The pieces of a secret to look for. */
interface SecretRuns {
  /** Runs of the key's bytes (as latin1 text), matched against the view as it is. */
  plain: RunSet;
  /** The same runs in lower-case hex, matched against the view in lower case. */
  hex: RunSet;
  /** The base64 characters a run's bytes alone decide, at each alignment (see base64Runs). */
  base64: RunSet;
  /** The key's bytes as latin1 text, for the tail of a masked copy. */
  bytes: string;
  /** The key holds `%` or `\`: it is looked for undecoded too. */
  literal: boolean;
}

/** How a view's bytes are read in each shape: as they are, in lower case, as standard base64. */
const AS_IS = Uint8Array.from({ length: 256 }, (_, b) => b);
const LOWER = AS_IS.map((b) => (b >= 65 && b <= 90 ? b + 32 : b));
const BASE64 = AS_IS.map((b) => (b === 45 ? 43 : b === 95 ? 47 : b));

function runSet(runs: Set<string>, length: number): RunSet {
  const byHash = new Map<number, string[]>();
  const filter = new Uint8Array(FILTER_SLOTS);
  for (const run of runs) {
    let h = 0;
    for (let i = 0; i < length; i++) h = (Math.imul(h, BASE) + run.charCodeAt(i)) | 0;
    const same = byHash.get(h);
    if (same) same.push(run);
    else byHash.set(h, [run]);
    filter[h & (FILTER_SLOTS - 1)] = 1;
  }
  let top = 1;
  for (let i = 1; i < length; i++) top = Math.imul(top, BASE);
  return { length, byHash, filter, top };
}

/** Every substring of `text` of `length` characters. */
function windows(text: string, length: number, into: Set<string>): void {
  for (let i = 0; i + length <= text.length; i++) into.add(text.slice(i, i + length));
}

/**
 * Base64 is read in standard characters (the view's `-` and `_` are read as `+` and `/`). For each
 * of the three byte alignments the key can have inside a longer encoded string, the characters that
 * depend on the key's bytes alone; a run of `run` bytes decides at least the returned number of
 * them whatever its alignment, so every window of that length of the three is a piece to look for.
 */
function base64Runs(bytes: Buffer, run: number, into: Set<string>): number {
  let length = Number.POSITIVE_INFINITY;
  for (let offset = 0; offset < 3; offset++) {
    length = Math.min(length, Math.floor((8 * (offset + run)) / 6) - Math.ceil((8 * offset) / 6));
  }
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64");
    windows(encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6)), length, into);
  }
  return length;
}

function runsOf(secret: string): SecretRuns {
  const bytes = Buffer.from(secret, "utf8");
  const run = Math.min(RUN, bytes.length);
  const latin1 = bytes.toString("latin1");
  const hex = new Set<string>();
  for (let i = 0; i + run <= bytes.length; i++) hex.add(bytes.toString("hex", i, i + run));
  // The view drops white space: a key holding some is looked for without it.
  const plain = new Set<string>();
  const compact = latin1.replace(/\s/g, "");
  const plainLength = Math.min(run, compact.length);
  if (compact.length >= MIN_SECRET_LENGTH) windows(compact, plainLength, plain);
  const base64 = new Set<string>();
  const base64Length = base64Runs(bytes, run, base64);
  return {
    plain: runSet(plain, plainLength),
    hex: runSet(hex, 2 * run),
    base64: runSet(base64, base64Length),
    bytes: latin1,
    literal: /[%\\]/.test(secret),
  };
}

const cache = new Map<string, SecretRuns>();
const MAX_CACHED = 1000;

function cachedRunsOf(secret: string): SecretRuns {
  let runs = cache.get(secret);
  if (!runs) {
    runs = runsOf(secret);
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(secret, runs);
  }
  return runs;
}

/** A view of the text: its bytes, and for each the span of the text it was read from. */
interface View {
  bytes: Uint8Array;
  length: number;
  from: Int32Array;
  to: Int32Array;
}

/** The value of the hex digit `c` (a character code), or -1. */
function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const lower = c | 32;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

/** The value of the `digits` hex digits of `text` at `at`, or -1. */
function hexAt(text: string, at: number, digits: number): number {
  if (at + digits > text.length) return -1;
  let value = 0;
  for (let i = at; i < at + digits; i++) {
    const v = hexValue(text.charCodeAt(i));
    if (v < 0) return -1;
    value = value * 16 + v;
  }
  return value;
}

/** Where a gap (white space, or an escaped line break `\n` `\r` `\t`) at `i` ends; `i` if none. */
function gapEnd(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 32 || (c >= 9 && c <= 13) || c === 0xa0) return i + 1;
  if (c === 92) {
    const next = text.charCodeAt(i + 1);
    if (next === 110 || next === 114 || next === 116) return i + 2;
  }
  return i;
}

/**
 * The text as bytes, with gaps dropped and, when `decode`, percent-escapes (`%6B`, one byte) and
 * JSON escapes (`\u006b`, `\/`) read as what they stand for; a character is given as its UTF-8
 * bytes, as the key's runs are.
 */
function viewOf(text: string, decode: boolean): View {
  // A character is at most 3 bytes (a lone surrogate as U+FFFD): room for the worst case only when
  // the text is not ASCII.
  const room = /[^\p{ASCII}]/u.test(text) ? 3 * text.length : text.length;
  const bytes = new Uint8Array(room);
  const from = new Int32Array(room);
  const to = new Int32Array(room);
  let length = 0;
  const push = (code: number, start: number, end: number) => {
    if (code < 0x80) {
      bytes[length] = code;
      from[length] = start;
      to[length++] = end;
      return;
    }
    for (const b of Buffer.from(String.fromCharCode(code), "utf8")) {
      bytes[length] = b;
      from[length] = start;
      to[length++] = end;
    }
  };
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    // Most characters are plain ASCII, neither a gap nor the start of an escape.
    if (c > 32 && c < 0x7f && c !== 37 && c !== 92) {
      bytes[length] = c;
      from[length] = i;
      to[length++] = ++i;
      continue;
    }
    const gap = gapEnd(text, i);
    if (gap !== i) {
      i = gap;
      continue;
    }
    const escaped = !decode
      ? -1
      : c === 37
        ? hexAt(text, i + 1, 2)
        : c === 92 && text[i + 1] === "u"
          ? hexAt(text, i + 2, 4)
          : -1;
    if (escaped >= 0 && c === 37) {
      // A percent-escape is one byte, not a character.
      bytes[length] = escaped;
      from[length] = i;
      to[length++] = i + 3;
      i += 3;
    } else if (escaped >= 0) {
      push(escaped, i, i + 6);
      i += 6;
    } else if (decode && c === 92 && text[i + 1] === "/") {
      push(47, i, i + 2);
      i += 2;
    } else {
      push(c, i, i + 1);
      i += 1;
    }
  }
  return { bytes, length, from, to };
}

/** Whether the view, read through `shape`, holds `run` at `at`. */
function holds(view: View, shape: Uint8Array, at: number, run: string): boolean {
  for (let k = 0; k < run.length; k++) {
    if (shape[view.bytes[at + k] as number] !== run.charCodeAt(k)) return false;
  }
  return true;
}

/**
 * Marks in `blank` the text under every window of the view, read through `shape`, that is one of
 * `runs`; the windows' ends in the text.
 */
function markRuns(view: View, shape: Uint8Array, runs: RunSet, blank: Uint8Array): number[] {
  const ends: number[] = [];
  const { length, filter, top } = runs;
  const bytes = view.bytes;
  if (runs.byHash.size === 0 || view.length < length) return ends;
  let h = 0;
  for (let i = 0; i < length; i++) h = (Math.imul(h, BASE) + (shape[bytes[i] as number] as number)) | 0;
  for (let i = 0; ; i++) {
    if (filter[h & (FILTER_SLOTS - 1)] === 1 && runs.byHash.get(h)?.some((run) => holds(view, shape, i, run))) {
      const end = view.to[i + length - 1] as number;
      blank.fill(1, view.from[i] as number, end);
      ends.push(end);
    }
    if (i + length >= view.length) return ends;
    const leaving = shape[bytes[i] as number] as number;
    const entering = shape[bytes[i + length] as number] as number;
    h = (Math.imul((h - Math.imul(leaving, top)) | 0, BASE) + entering) | 0;
  }
}

/**
 * A masked copy shows the key's first characters, a mask and its last characters
 * (`sk-proj-********abcd`): where a run of the key ends, a mask follows and the word after it is
 * how the key ends, the mask and that word are blanked too.
 */
const MASKED_TAIL = /[ \t]*(?:[*•·#]{2,}|\.{3,}|…)[ \t]*([A-Za-z0-9_-]+)/y;

function markMaskedTails(text: string, ends: number[], bytes: string, blank: Uint8Array): void {
  for (const end of ends) {
    MASKED_TAIL.lastIndex = end;
    const tail = MASKED_TAIL.exec(text);
    if (tail && bytes.endsWith(tail[1] as string)) blank.fill(1, end, MASKED_TAIL.lastIndex);
  }
}

/** The keys of each pool by each of its keys: a call's key brings its pool's other keys along. */
const poolOf = new Map<string, readonly string[]>();
const MAX_POOL_KEYS = 100_000;

/**
 * Makes every scrub of one of `keys` scrub all of them: an upstream that echoes a credential of
 * the same account (or the gateway, in a message about another key of the pool) shows none.
 */
export function notePoolSecrets(keys: readonly string[]): void {
  if (keys.length < 2) return;
  if (poolOf.size + keys.length > MAX_POOL_KEYS) poolOf.clear();
  const pool = [...keys];
  for (const key of keys) poolOf.set(key, pool);
}

/**
 * `text` with every run of `secret` (in any spacing or common encoding) blanked, and every run of
 * the other keys of its pool (see `notePoolSecrets`).
 */
export function withoutSecret(text: string, secret: string | undefined): string {
  if (!secret) return text;
  const pool = poolOf.get(secret);
  if (!pool) return withoutOneSecret(text, secret);
  let out = withoutOneSecret(text, secret);
  for (const other of pool) if (other !== secret) out = withoutOneSecret(out, other);
  return out;
}

function withoutOneSecret(text: string, secret: string): string {
  if (secret.length < MIN_SECRET_LENGTH || text.length === 0) return text;
  const runs = cachedRunsOf(secret);
  const blank = new Uint8Array(text.length);
  const view = viewOf(text, true);
  const ends = markRuns(view, AS_IS, runs.plain, blank);
  if (runs.literal) ends.push(...markRuns(viewOf(text, false), AS_IS, runs.plain, blank));
  markMaskedTails(text, ends, runs.bytes, blank);
  const found =
    ends.length + markRuns(view, LOWER, runs.hex, blank).length + markRuns(view, BASE64, runs.base64, blank).length;
  if (found === 0) return text;
  let out = "";
  let i = 0;
  while (i < text.length) {
    if (blank[i] === 1) {
      while (i < text.length && blank[i] === 1) i++;
      out += REDACTED;
    } else {
      const next = blank.indexOf(1, i);
      const end = next === -1 ? text.length : next;
      out += text.slice(i, end);
      i = end;
    }
  }
  return out;
}
