import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import { unixNow } from "../core/ids.js";
import { GatewayError } from "../errors.js";
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
  /** A first request still running after this long is taken as abandoned (ms). */
  lockMs: number;
}

export const DEFAULT_IDEMPOTENCY: IdempotencySettings = {
  retentionSeconds: 24 * 3600,
  waitMs: 30_000,
  lockMs: 10 * 60_000,
};

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
 */
export class IdempotencyKeys {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly settings: IdempotencySettings = DEFAULT_IDEMPOTENCY,
  ) {}

  async run(
    scope: { tokenId: number; key: string; fingerprint: string },
    produce: () => Promise<StoredAnswer>,
  ): Promise<StoredAnswer & { replayed: boolean }> {
    const deadline = Date.now() + this.settings.waitMs;
    for (;;) {
      const now = Date.now();
      const inserted = await this.db
        .insertInto("idempotency_keys")
        .values({
          token_id: scope.tokenId,
          key: scope.key,
          fingerprint: scope.fingerprint,
          status: "in_progress",
          locked_until: now + this.settings.lockMs,
          created_at: unixNow(),
          expires_at: unixNow() + this.settings.retentionSeconds,
        })
        .onConflict((oc) => oc.columns(["token_id", "key"]).doNothing())
        .returning("key")
        .executeTakeFirst();
      if (inserted) return { ...(await this.produceAndKeep(scope, produce)), replayed: false };

      const row = await this.db
        .selectFrom("idempotency_keys")
        .selectAll()
        .where("token_id", "=", scope.tokenId)
        .where("key", "=", scope.key)
        .executeTakeFirst();
      if (!row) continue; // the first request failed and let the key go: run again
      const abandoned = row.status === "in_progress" && Number(row.locked_until) < now;
      if (Number(row.expires_at) <= unixNow() || abandoned) {
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
      if (Date.now() >= deadline) throw new GatewayError("GW_ERR_IDEMPOTENCY_IN_PROGRESS");
      await sleep(25);
    }
  }

  private async produceAndKeep(
    scope: { tokenId: number; key: string },
    produce: () => Promise<StoredAnswer>,
  ): Promise<StoredAnswer> {
    const release = () =>
      this.db
        .deleteFrom("idempotency_keys")
        .where("token_id", "=", scope.tokenId)
        .where("key", "=", scope.key)
        .where("status", "=", "in_progress")
        .execute();
    let answer: StoredAnswer;
    try {
      answer = await produce();
    } catch (err) {
      // A request that failed charged nothing (or was refunded): the key is let go, and a retry
      // runs again (it gets the same client error, or succeeds once the cause is gone).
      await release();
      throw err;
    }
    if (answer.status >= 500) await release();
    else await this.keep(scope, answer);
    return answer;
  }

  private async keep(scope: { tokenId: number; key: string }, answer: StoredAnswer): Promise<void> {
    await this.db
      .updateTable("idempotency_keys")
      .set({ status: "done", response_status: answer.status, response_body: JSON.stringify(answer.body) })
      .where("token_id", "=", scope.tokenId)
      .where("key", "=", scope.key)
      .execute();
  }

  /** Forgets answers past their retention. */
  async deleteExpired(): Promise<number> {
    const res = await this.db.deleteFrom("idempotency_keys").where("expires_at", "<=", unixNow()).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
