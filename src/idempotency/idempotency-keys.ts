import { createHash } from "node:crypto";
import { GatewayError } from "../core/errors.js";
import { newRequestId } from "../core/ids.js";
import type { IdempotencyKeyRows } from "../store/idempotency-keys.js";

/** An answer as it was sent, kept to be sent again. */
export interface StoredAnswer {
  status: number;
  body: unknown;
}

export interface IdempotencySettings {
  /** How long an answer is remembered (seconds). */
  retentionSeconds: number;
  /** How long a duplicate waits for the first request's answer before a 409 (ms). */
  waitMs: number;
  /**
   * Lease of the running request on its key (ms), renewed while it runs. A key whose lease ran
   * out belongs to a request whose instance died (or stalled that long): a retry takes it over.
   */
  leaseMs: number;
  /** How often a running request renews its lease (ms); a third of the lease by default. */
  renewEveryMs?: number;
  /** This instance, written on the keys it runs. */
  owner: string;
  /** The clock (Unix ms); tests move it instead of waiting. */
  now?: () => number;
}

export const DEFAULT_IDEMPOTENCY: IdempotencySettings = {
  retentionSeconds: 24 * 3600,
  waitMs: 30_000,
  leaseMs: 30_000,
  owner: "local",
};

/**
 * One run of a key: the first request, or a retry that took the key over from a dead instance.
 * Every attempt of a key shares `runId`, so what it charges can be tied to the key: a retry finds
 * (and closes) what an earlier attempt left instead of charging a second time.
 */
export interface IdempotentRun {
  runId: string;
  /** 1 for the first request; one more for each takeover. */
  attempt: number;
}

const KEY = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/;

/**
 * The `Idempotency-Key` header: absent gives null; present it must be 1 to 255 printable ASCII
 * characters (no leading or trailing space), else a 400 naming the header.
 */
export function idempotencyKeyOf(headers: Record<string, string | string[] | undefined>): string | null {
  const raw = headers["idempotency-key"];
  if (raw === undefined) return null;
  if (typeof raw !== "string" || !KEY.test(raw)) {
    throw new GatewayError("GW_ERR_VALIDATION", "header Idempotency-Key must be 1 to 255 printable ASCII characters", {
      param: "Idempotency-Key",
    });
  }
  return raw;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** What makes two requests "the same": method, path and body (key order does not matter). */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash("sha256")
    .update(`${method} ${path}\n${canonical(body)}`)
    .digest("hex");
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Remembered answers of creating requests, kept in the store so they hold across instances and
 * restarts. The first request with a key runs; a repeat with the same request gets the same
 * answer and runs nothing; a repeat that arrives while the first still runs waits for its answer.
 * Failed requests (an error, or an answer with a status of 500 or more) are not remembered, so
 * the client may simply retry.
 *
 * A running request holds a lease on its key (owner and expiry), renewed while it runs. When its
 * instance dies the lease runs out and a retry takes the key over as the next attempt of the same
 * run (a conditional update, so one retry wins); a late answer of the old attempt is not kept.
 */
export class IdempotencyKeys {
  private readonly now: () => number;

  constructor(
    private readonly rows: IdempotencyKeyRows,
    private readonly settings: IdempotencySettings = DEFAULT_IDEMPOTENCY,
  ) {
    this.now = settings.now ?? Date.now;
  }

  async run(
    scope: { tokenId: number; key: string; fingerprint: string },
    produce: (run: IdempotentRun) => Promise<StoredAnswer>,
  ): Promise<StoredAnswer & { replayed: boolean }> {
    const deadline = Date.now() + this.settings.waitMs;
    for (;;) {
      const now = this.now();
      const nowSeconds = Math.floor(now / 1000);
      const runId = newRequestId();
      const inserted = await this.rows.insertRunning(scope, {
        runId,
        owner: this.settings.owner,
        lockedUntil: now + this.settings.leaseMs,
        createdAt: nowSeconds,
        expiresAt: nowSeconds + this.settings.retentionSeconds,
      });
      if (inserted) return { ...(await this.produceAndKeep(scope, { runId, attempt: 1 }, produce)), replayed: false };

      const row = await this.rows.find(scope);
      if (!row) continue; // the first request failed and let the key go: run again
      if (row.expiresAt <= nowSeconds) {
        await this.rows.deleteIfUnchanged(scope, row);
        continue;
      }
      if (row.fingerprint !== scope.fingerprint) throw new GatewayError("GW_ERR_IDEMPOTENCY_MISMATCH");
      if (row.status === "done") {
        return { status: Number(row.responseStatus), body: JSON.parse(row.responseBody ?? "null"), replayed: true };
      }
      if (row.lockedUntil < now) {
        // The request running the key stopped renewing its lease: its instance is gone. Take over.
        if (await this.rows.takeOver(scope, row, this.settings.owner, now + this.settings.leaseMs)) {
          const run = { runId: row.runId ?? runId, attempt: row.attempts + 1 };
          return { ...(await this.produceAndKeep(scope, run, produce)), replayed: false };
        }
        continue;
      }
      if (Date.now() >= deadline) throw new GatewayError("GW_ERR_IDEMPOTENCY_IN_PROGRESS");
      await sleep(25);
    }
  }

  private async produceAndKeep(
    scope: { tokenId: number; key: string },
    run: IdempotentRun,
    produce: (run: IdempotentRun) => Promise<StoredAnswer>,
  ): Promise<StoredAnswer> {
    const renew = setInterval(
      () => {
        this.rows.renew(scope, run.attempt, this.now() + this.settings.leaseMs).catch(() => {
          // A missed renewal is retried at the next tick; the lease outlasts several of them.
        });
      },
      this.settings.renewEveryMs ?? Math.max(10, Math.floor(this.settings.leaseMs / 3)),
    );
    renew.unref();
    let answer: StoredAnswer;
    try {
      answer = await produce(run);
    } catch (err) {
      // A request that failed charged nothing (or was refunded): the key is let go, and a retry
      // runs again (it gets the same client error, or succeeds once the cause is gone).
      await this.rows.release(scope, run.attempt);
      throw err;
    } finally {
      clearInterval(renew);
    }
    // Kept unless another attempt has taken the key over meanwhile.
    if (answer.status >= 500) await this.rows.release(scope, run.attempt);
    else await this.rows.keep(scope, run.attempt, { status: answer.status, body: JSON.stringify(answer.body) });
    return answer;
  }

  /** Forgets answers past their retention. */
  deleteExpired(): Promise<number> {
    return this.rows.deleteExpired(Math.floor(this.now() / 1000));
  }
}
