import type { Kysely } from "kysely";
import type { Database } from "./schema.js";

/** A token's key: the scope of one remembered answer. */
export interface KeyScope {
  tokenId: number;
  key: string;
}

/** A key's row as the idempotency rules read it. */
export interface KeyRow {
  fingerprint: string;
  status: string;
  responseStatus: number | null;
  responseBody: string | null;
  /** Unix milliseconds. */
  lockedUntil: number;
  runId: string | null;
  attempts: number;
  /** Unix seconds. */
  createdAt: number;
  /** Unix seconds. */
  expiresAt: number;
}

/**
 * The rows of `idempotency_keys`: every change is one conditional statement, so that two
 * instances racing on a key never both win. The rules (who runs, who waits, who takes over) are
 * those of `idempotency/idempotency-keys.ts`.
 */
export class IdempotencyKeyRows {
  constructor(private readonly db: Kysely<Database>) {}

  /** Inserts a running key unless the token has it already; true when this call inserted it. */
  async insertRunning(
    scope: KeyScope & { fingerprint: string },
    run: { runId: string; owner: string; lockedUntil: number; createdAt: number; expiresAt: number },
  ): Promise<boolean> {
    const inserted = await this.db
      .insertInto("idempotency_keys")
      .values({
        token_id: scope.tokenId,
        key: scope.key,
        fingerprint: scope.fingerprint,
        status: "in_progress",
        locked_until: run.lockedUntil,
        owner: run.owner,
        run_id: run.runId,
        attempts: 1,
        created_at: run.createdAt,
        expires_at: run.expiresAt,
      })
      .onConflict((oc) => oc.columns(["token_id", "key"]).doNothing())
      .returning("key")
      .executeTakeFirst();
    return inserted !== undefined;
  }

  async find(scope: KeyScope): Promise<KeyRow | undefined> {
    const row = await this.db
      .selectFrom("idempotency_keys")
      .selectAll()
      .where("token_id", "=", scope.tokenId)
      .where("key", "=", scope.key)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      fingerprint: row.fingerprint,
      status: row.status,
      responseStatus: row.response_status === null ? null : Number(row.response_status),
      responseBody: row.response_body,
      lockedUntil: Number(row.locked_until),
      runId: row.run_id,
      attempts: Number(row.attempts),
      createdAt: Number(row.created_at),
      expiresAt: Number(row.expires_at),
    };
  }

  /** Deletes an expired key, unless someone changed it since `row` was read. */
  async deleteIfUnchanged(scope: KeyScope, row: KeyRow): Promise<void> {
    await this.db
      .deleteFrom("idempotency_keys")
      .where("token_id", "=", scope.tokenId)
      .where("key", "=", scope.key)
      .where("created_at", "=", row.createdAt)
      .where("locked_until", "=", row.lockedUntil)
      .execute();
  }

  /**
   * Takes a running key over from an owner whose lease ran out, as attempt `row.attempts + 1`;
   * true when this call won it (nobody else took it over or renewed it since `row` was read).
   */
  async takeOver(scope: KeyScope, row: KeyRow, owner: string, lockedUntil: number): Promise<boolean> {
    const taken = await this.db
      .updateTable("idempotency_keys")
      .set({ owner, locked_until: lockedUntil, attempts: row.attempts + 1 })
      .where("token_id", "=", scope.tokenId)
      .where("key", "=", scope.key)
      .where("status", "=", "in_progress")
      .where("attempts", "=", row.attempts)
      .where("locked_until", "=", row.lockedUntil)
      .executeTakeFirst();
    return Number(taken.numUpdatedRows) === 1;
  }

  /** Conditions that hold only while `attempt` still runs the key (a takeover bumps the attempt). */
  private owned(scope: KeyScope, attempt: number) {
    return this.db
      .updateTable("idempotency_keys")
      .where("token_id", "=", scope.tokenId)
      .where("key", "=", scope.key)
      .where("status", "=", "in_progress")
      .where("attempts", "=", attempt);
  }

  /** Extends the lease of `attempt`, if it still runs the key. */
  async renew(scope: KeyScope, attempt: number, lockedUntil: number): Promise<void> {
    await this.owned(scope, attempt).set({ locked_until: lockedUntil }).execute();
  }

  /** Keeps the answer of `attempt`, if it still runs the key. */
  async keep(scope: KeyScope, attempt: number, answer: { status: number; body: string }): Promise<void> {
    await this.owned(scope, attempt)
      .set({ status: "done", response_status: answer.status, response_body: answer.body })
      .execute();
  }

  /** Lets the key go (the request failed), if `attempt` still runs it. */
  async release(scope: KeyScope, attempt: number): Promise<void> {
    await this.db
      .deleteFrom("idempotency_keys")
      .where("token_id", "=", scope.tokenId)
      .where("key", "=", scope.key)
      .where("status", "=", "in_progress")
      .where("attempts", "=", attempt)
      .execute();
  }

  /** Deletes the keys whose retention ended by `nowSeconds`; returns how many. */
  async deleteExpired(nowSeconds: number): Promise<number> {
    const res = await this.db.deleteFrom("idempotency_keys").where("expires_at", "<=", nowSeconds).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
