import type { AnyDb } from "./dialect.js";

/** Channel health: a moving average of recent outcomes (1 = all recent calls succeeded). */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable("channels")
    .addColumn("recent_success_rate", "double precision", (c) => c.notNull().defaultTo(1))
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable("channels").dropColumn("recent_success_rate").execute();
}
