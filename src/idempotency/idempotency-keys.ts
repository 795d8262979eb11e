import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import { GatewayError } from "../core/errors.js";
import { newRequestId } from "../core/ids.js";
import type { Database } from "../store/schema.js";

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
    private readonly db: Kysely<Database>,
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
      const inserted = await this.db
        .insertInto("idempotency_keys")
        .values({
          token_id: scope.tokenId,
          key: scope.key,
          fingerprint: scope.fingerprint,
          status: "in_progress",
          locked_until: now + this.settings.leaseMs,
          owner: this.settings.owner,
          run_id: runId,
          attempts: 1,
          created_at: nowSeconds,
          expires_at: nowSeconds + this.settings.retentionSeconds,
        })
        .onConflict((oc) => oc.columns(["token_id", "key"]).doNothing())
        .returning("key")
        .executeTakeFirst();
      if (inserted) return { ...(await this.produceAndKeep(scope, { runId, attempt: 1 }, produce)), replayed: false };

      const row = await this.db
        .selectFrom("idempotency_keys")
        .selectAll()
        .where("token_id", "=", scope.tokenId)
        .where("key", "=", scope.key)
        .executeTakeFirst();
      if (!row) continue; // the first request failed and let the key go: run again
      if (Number(row.expires_at) <= nowSeconds) {
        await this.db
          .deleteFrom("idempotency_keys")
          .where("token_id", "=", scope.tokenId)
          .where("key", "=", scope.key)
          .where("created_at", "=", row.created_at)
          .where("locked_until", "=", row.locked_until)
          .execute();
        continue;
      }
      if (row.fingerprint !== scope.fingerprint) throw new GatewayError("GW_ERR_IDEMPOTENCY_MISMATCH");
      if (row.status === "done") {
        return { status: Number(row.response_status), body: JSON.parse(row.response_body ?? "null"), replayed: true };
      }
      if (Number(row.locked_until) < now) {
        // The request running the key stopped renewing its lease: its instance is gone. Take over.
        const attempt = Number(row.attempts) + 1;
        const taken = await this.db
          .updateTable("idempotency_keys")
          .set({ owner: this.settings.owner, locked_until: now + this.settings.leaseMs, attempts: attempt })
          .where("token_id", "=", scope.tokenId)
          .where("key", "=", scope.key)
          .where("status", "=", "in_progress")
          .where("attempts", "=", Number(row.attempts))
          .where("locked_until", "=", row.locked_until)
          .executeTakeFirst();
        if (Number(taken.numUpdatedRows) === 1) {
          const run = { runId: row.run_id ?? runId, attempt };
          return { ...(await this.produceAndKeep(scope, run, produce)), replayed: false };
        }
        continue;
      }
      if (Date.now() >= deadline) throw new GatewayError("GW_ERR_IDEMPOTENCY_IN_PROGRESS");
      await sleep(25);
    }
  }

  /** Conditions that hold only while `run` still owns the key (a takeover bumps the attempt). */
  private owned(scope: { tokenId: number; key: string }, run: IdempotentRun) {
    return this.db
      .updateTable("idempotency_keys")
      .where("token_id", "=", scope.tokenId)
      .where("key", "=", scope.key)
      .where("status", "=", "in_progress")
      .where("attempts", "=", run.attempt);
  }

  private async produceAndKeep(
    scope: { tokenId: number; key: string },
    run: IdempotentRun,
    produce: (run: IdempotentRun) => Promise<StoredAnswer>,
  ): Promise<StoredAnswer> {
    const release = () =>
      this.db
        .deleteFrom("idempotency_keys")
        .where("token_id", "=", scope.tokenId)
        .where("key", "=", scope.key)
        .where("status", "=", "in_progress")
        .where("attempts", "=", run.attempt)
        .execute();
    const renew = setInterval(
      () => {
        this.owned(scope, run)
          .set({ locked_until: this.now() + this.settings.leaseMs })
          .execute()
          .catch(() => {
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
      await release();
      throw err;
    } finally {
      clearInterval(renew);
    }
    if (answer.status >= 500) await release();
    else await this.keep(scope, run, answer);
    return answer;
  }

  /** Keeps the answer, unless another attempt has taken the key over meanwhile. */
  private async keep(scope: { tokenId: number; key: string }, run: IdempotentRun, answer: StoredAnswer) {
    await this.owned(scope, run)
      .set({ status: "done", response_status: answer.status, response_body: JSON.stringify(answer.body) })
      .execute();
  }

  /** Forgets answers past their retention. */
  async deleteExpired(): Promise<number> {
    const res = await this.db
      .deleteFrom("idempotency_keys")
      .where("expires_at", "<=", Math.floor(this.now() / 1000))
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
