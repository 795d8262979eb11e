import type { Kysely, Selectable } from "kysely";
import { unixNow } from "../core/ids.js";
import { newWebhookSecret } from "../core/webhook-secret.js";
import type { Database, UsersTable } from "./schema.js";

export type UserRow = Selectable<UsersTable>;

export class Users {
  constructor(private readonly db: Kysely<Database>) {}

  async create(input: { name: string; group?: string; creditLine?: number }): Promise<UserRow> {
    const now = unixNow();
    return this.db
      .insertInto("users")
      .values({
        name: input.name,
        group: input.group ?? "default",
        quota: 0,
        credit_line: input.creditLine ?? 0,
        status: "enabled",
        // Every user can receive signed webhooks; whoever creates the user shows the secret once.
        webhook_secret: newWebhookSecret(),
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  get(id: number): Promise<UserRow | undefined> {
    return this.db.selectFrom("users").selectAll().where("id", "=", id).executeTakeFirst();
  }

  list(options: { limit: number; afterId?: number }): Promise<UserRow[]> {
    let q = this.db.selectFrom("users").selectAll();
    if (options.afterId !== undefined) q = q.where("id", ">", options.afterId);
    return q.orderBy("id").limit(options.limit).execute();
  }

  async update(
    id: number,
    patch: Partial<Pick<UserRow, "name" | "group" | "status" | "webhook_url" | "webhook_secret" | "credit_line">>,
  ): Promise<UserRow | undefined> {
    return this.db
      .updateTable("users")
      .set({ ...patch, updated_at: unixNow() })
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirst();
  }
}
