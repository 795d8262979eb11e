import type { Kysely } from "kysely";
import { unixNow } from "../core/ids.js";
import type { Database } from "./schema.js";

/** The gateway's own settings (key -> JSON value), shared by every instance of a store. */
export class Settings {
  constructor(private readonly db: Kysely<Database>) {}

  async get<T>(key: string): Promise<T | undefined> {
    const row = await this.db.selectFrom("settings").select("value").where("key", "=", key).executeTakeFirst();
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  /** Stores `value` unless the key has one already; true when this call stored it. */
  async setIfAbsent(key: string, value: unknown): Promise<boolean> {
    const inserted = await this.db
      .insertInto("settings")
      .values({ key, value: JSON.stringify(value), updated_at: unixNow() })
      .onConflict((oc) => oc.column("key").doNothing())
      .returning("key")
      .executeTakeFirst();
    return inserted !== undefined;
  }

  async set(key: string, value: unknown): Promise<void> {
    const text = JSON.stringify(value);
    await this.db
      .insertInto("settings")
      .values({ key, value: text, updated_at: unixNow() })
      .onConflict((oc) => oc.column("key").doUpdateSet({ value: text, updated_at: unixNow() }))
      .execute();
  }
}
