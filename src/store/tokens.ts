import type { Kysely, Selectable } from "kysely";
import { newTokenKey, sha256Hex, unixNow } from "../core/ids.js";
import type { Database, TokensTable } from "./schema.js";

export type TokenRow = Selectable<TokensTable>;

export interface NewToken {
  userId: number;
  name: string;
  expiresAt?: number | null;
  quotaLimit?: number | null;
  models?: string[] | null;
  ipAllow?: string[] | null;
}

export class Tokens {
  constructor(private readonly db: Kysely<Database>) {}

  /** Creates a token; the plain key is returned here once and only its hash is stored. */
  async create(input: NewToken): Promise<{ row: TokenRow; key: string }> {
    const key = newTokenKey();
    const now = unixNow();
    const row = await this.db
      .insertInto("tokens")
      .values({
        user_id: input.userId,
        name: input.name,
        key_hash: sha256Hex(key),
        key_prefix: key.slice(0, 7),
        status: "enabled",
        expires_at: input.expiresAt ?? null,
        quota_limit: input.quotaLimit ?? null,
        models: input.models ? JSON.stringify(input.models) : null,
        ip_allow: input.ipAllow ? JSON.stringify(input.ipAllow) : null,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { row, key };
  }

  findByKey(key: string): Promise<TokenRow | undefined> {
    return this.db.selectFrom("tokens").selectAll().where("key_hash", "=", sha256Hex(key)).executeTakeFirst();
  }

  get(id: number): Promise<TokenRow | undefined> {
    return this.db.selectFrom("tokens").selectAll().where("id", "=", id).executeTakeFirst();
  }

  listByUser(userId: number): Promise<TokenRow[]> {
    return this.db.selectFrom("tokens").selectAll().where("user_id", "=", userId).orderBy("id").execute();
  }

  async update(
    id: number,
    patch: {
      name?: string;
      status?: string;
      expiresAt?: number | null;
      quotaLimit?: number | null;
      models?: string[] | null;
      ipAllow?: string[] | null;
    },
  ): Promise<TokenRow | undefined> {
    const set: Partial<TokenRow> = { updated_at: unixNow() };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.status !== undefined) set.status = patch.status;
    if (patch.expiresAt !== undefined) set.expires_at = patch.expiresAt;
    if (patch.quotaLimit !== undefined) set.quota_limit = patch.quotaLimit;
    if (patch.models !== undefined) set.models = patch.models ? JSON.stringify(patch.models) : null;
    if (patch.ipAllow !== undefined) set.ip_allow = patch.ipAllow ? JSON.stringify(patch.ipAllow) : null;
    return this.db.updateTable("tokens").set(set).where("id", "=", id).returningAll().executeTakeFirst();
  }

  /** Revokes every token of a user that is not revoked yet; returns how many. */
  async revokeAllOfUser(userId: number): Promise<number> {
    const rows = await this.db
      .updateTable("tokens")
      .set({ status: "revoked", updated_at: unixNow() })
      .where("user_id", "=", userId)
      .where("status", "!=", "revoked")
      .returning("id")
      .execute();
    return rows.length;
  }
}
