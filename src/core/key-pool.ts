import type { UpstreamError } from "./upstream-error.js";

/** How a channel's calls spread over its live keys. */
export type KeyRotation = "round_robin" | "random";

export const KEY_ROTATIONS: readonly KeyRotation[] = ["round_robin", "random"];

/** One upstream key of a channel's pool, as the gateway sees it. Holds the secret. */
export interface PoolKey {
  id: number;
  channelId: number;
  key: string;
  /** Set by the operator: a disabled key is never used nor probed. */
  enabled: boolean;
  /** Why the upstream refused the key; null while it is live. */
  deadReason: string | null;
  /** When it was found dead (unix seconds); null while it is live. */
  deadAt: number | null;
  /** When a dead key is probed next (unix ms). */
  nextProbeAt: number | null;
  /** Probes failed in a row since it died: the wait before the next one grows with them. */
  probeFailures: number;
  calls: number;
  failures: number;
  lastError: string | null;
  lastErrorAt: number | null;
  createdAt: number;
}

/** Whether calls may use the key now. */
export function isLive(key: Pick<PoolKey, "enabled" | "deadAt">): boolean {
  return key.enabled && key.deadAt === null;
}

/** The state an operator reads: `disabled` (by them), `dead` (refused upstream) or `live`. */
export function keyState(key: Pick<PoolKey, "enabled" | "deadAt">): "live" | "dead" | "disabled" {
  if (!key.enabled) return "disabled";
  return key.deadAt === null ? "live" : "dead";
}

/**
 * A key as an operator may see it: its last four characters behind a mask (a short key shows
 * none), never more. Enough to tell keys apart against the vendor's dashboard.
 */
export function maskKey(key: string): string {
  return key.length >= 16 ? `****${key.slice(-4)}` : "****";
}

/** Upstream answers that mean the account behind the key cannot pay or is out of quota. */
const EXHAUSTED =
  /(insufficient[ _-]?(balance|quota|funds|credit)|quota[ _-]?(exceeded|exhausted)|exceeded your (current )?quota|credit balance is too low|billing|out of credits?|account (is )?(suspended|deactivated|disabled)|payment required)/i;

/**
 * Why an upstream failure kills the key that made the call, or null when it does not: the key
 * was refused (401/403, or the adapter classed it `auth`), or the account behind it is out of
 * quota or balance (402, or a 403 or 429 saying so; never a 400, which may echo the client's own
 * words). A rate limit that is only a rate limit leaves the key live.
 */
export function keyDeathReason(error: Pick<UpstreamError, "kind" | "status" | "message">): string | null {
  if (error.status === null) return null;
  const message = error.message.slice(0, 300);
  // Only statuses an account's state answers with: a 400 may echo what the client sent.
  if (error.status === 402 || ((error.status === 403 || error.status === 429) && EXHAUSTED.test(error.message))) {
    return `quota exhausted (HTTP ${error.status}): ${message}`;
  }
  if (error.kind === "auth") return `key refused (HTTP ${error.status}): ${message}`;
  return null;
}

/** First wait before a dead key is probed again, and the longest (ms). */
export const FIRST_PROBE_DELAY_MS = 60_000;
export const MAX_PROBE_DELAY_MS = 3_600_000;

/** The wait before the next probe of a key that failed `probeFailures` probes in a row. */
export function probeDelayMs(probeFailures: number): number {
  return Math.min(MAX_PROBE_DELAY_MS, FIRST_PROBE_DELAY_MS * 2 ** Math.min(20, Math.max(0, probeFailures)));
}

/**
 * The live keys of a pool in the order a call tries them: the first is the one the rotation
 * picks (round robin from `turn`, or at random), the others follow. `turn` counts the channel's
 * calls on this instance.
 */
export function keysInTurn<K extends Pick<PoolKey, "enabled" | "deadAt">>(
  keys: readonly K[],
  rotation: KeyRotation,
  turn: number,
  random: () => number = Math.random,
): K[] {
  const live = keys.filter(isLive);
  if (live.length <= 1) return live;
  const start = rotation === "random" ? Math.floor(random() * live.length) : turn % live.length;
  return [...live.slice(start), ...live.slice(0, start)];
}

/**
 * Keys read from an operator's text: one a line, surrounding blanks dropped, empty lines and
 * lines starting with `#` skipped, repeats kept once.
 */
export function keysFromText(text: string): string[] {
  const seen = new Set<string>();
  for (const line of text.split(/\r?\n/)) {
    const key = line.trim();
    if (key === "" || key.startsWith("#")) continue;
    seen.add(key);
  }
  return [...seen];
}
