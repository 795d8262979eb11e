import { sql } from "kysely";
import { type AnyDb, isPostgres } from "./dialect.js";

/**
 * The charge lifecycle: every charge is a row of `charges`, open until it is settled or refunded,
 * with the time by which it must close; and each user's credit line (how far below zero the
 * balance may go, 0 by default).
 *
 * Charges made before this migration are filled in from the ledger: refunded or settled where the
 * ledger says so, open where the reference is a task still running (it closes with the task),
 * and otherwise settled: before the lifecycle, a sale left only its charge row.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable("users")
    .addColumn("credit_line", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();

  let charges = db.schema
    .createTable("charges")
    .addColumn("reference", "text", (c) => c.primaryKey())
    .addColumn("user_id", "bigint", (c) => c.notNull())
    .addColumn("token_id", "bigint")
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("held", "bigint", (c) => c.notNull())
    .addColumn("seen", "bigint")
    .addColumn("settled", "bigint")
    .addColumn("uncollected", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("close_by", "bigint", (c) => c.notNull())
    .addColumn("instance", "text", (c) => c.notNull())
    .addColumn("lease_until", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("close_reason", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("closed_at", "bigint");
  // On SQLite the rows live in the primary key's own tree: one tree to write per charge, not two.
  if (!isPostgres(db)) charges = charges.modifyEnd(sql`without rowid`);
  await charges.execute();
  // The reaper and the start-up recovery look at open charges only.
  await db.schema
    .createIndex("charges_open_idx")
    .on("charges")
    .columns(["state", "close_by"])
    .where(sql.ref("state"), "=", "open")
    .execute();

  await sql`
    insert into charges (reference, user_id, token_id, state, held, seen, settled, uncollected, close_by,
                         instance, lease_until, close_reason, created_at, closed_at)
    select l.reference, l.user_id, l.token_id,
      case
        when exists (select 1 from ledger r where r.reference = l.reference and r.kind = 'refund') then 'refunded'
        when exists (select 1 from ledger s where s.reference = l.reference and s.kind = 'settle') then 'settled'
        when l.reference like 'task:%' and exists (
          select 1 from tasks t where t.task_id = substr(l.reference, 6) and t.status not in ('SUCCESS', 'FAILURE')
        ) then 'open'
        else 'settled'
      end,
      -l.amount, null,
      -l.amount - coalesce((select sum(s.amount) from ledger s where s.reference = l.reference and s.kind = 'settle'), 0),
      0, (l.created_at + 86400) * 1000, 'before-lifecycle', 0, 'recorded before the charge lifecycle', l.created_at,
      l.created_at
    from ledger l
    where l.kind = 'charge'
  `.execute(db);
  // A charge that is still open has no closing time yet.
  await sql`update charges set settled = null, closed_at = null, close_reason = '' where state = 'open'`.execute(db);
  await sql`update charges set settled = null where state = 'refunded'`.execute(db);
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable("charges").ifExists().execute();
  await db.schema.alterTable("users").dropColumn("credit_line").execute();
}
