import { sql } from "kysely";
import type { AnyDb } from "./dialect.js";

/**
 * Limits and retries that must hold by construction:
 * - `users.tasks_unfinished`: the user's unfinished tasks, kept in the same transaction as every
 *   task insert and every terminal move, so the in-flight limit is one conditional update;
 * - an Idempotency-Key row carries a lease (`owner`, `locked_until`) and the run it belongs to
 *   (`run_id`, `attempts`), so a key left by a dead instance is taken over, not waited out;
 * - top-up references are kept per user: the ledger reference of a top-up holds its user.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable("users")
    .addColumn("tasks_unfinished", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update users set tasks_unfinished = (
      select count(*) from tasks
      where tasks.user_id = users.id and tasks.status not in ('SUCCESS', 'FAILURE')
    )`.execute(db);

  await db.schema.alterTable("idempotency_keys").addColumn("owner", "text").execute();
  await db.schema.alterTable("idempotency_keys").addColumn("run_id", "text").execute();
  await db.schema
    .alterTable("idempotency_keys")
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(1))
    .execute();

  await sql`update ledger set reference = 'user:' || user_id || ':' || reference where kind = 'topup'`.execute(db);
}

export async function down(db: AnyDb): Promise<void> {
  await sql`update ledger set reference = substr(reference, length('user:' || user_id || ':') + 1)
    where kind = 'topup' and reference like 'user:%'`.execute(db);
  await db.schema.alterTable("idempotency_keys").dropColumn("attempts").execute();
  await db.schema.alterTable("idempotency_keys").dropColumn("run_id").execute();
  await db.schema.alterTable("idempotency_keys").dropColumn("owner").execute();
  await db.schema.alterTable("users").dropColumn("tasks_unfinished").execute();
}
