import { sql } from "kysely";
import { type AnyDb, isPostgres, withId } from "./dialect.js";

/** Events of a task kept at most; a task that keeps failing its polls stops adding rows there. */
export const TASK_EVENTS_PER_TASK = 100;

const INDEXES: [name: string, table: string, columns: string[]][] = [
  // Time ranges of the overview and of one user's spend.
  ["request_logs_time_idx", "request_logs", ["created_at"]],
  ["request_logs_user_time_idx", "request_logs", ["user_id", "created_at"]],
  ["tasks_time_idx", "tasks", ["created_at"]],
  ["tasks_user_time_idx", "tasks", ["user_id", "created_at"]],
  // The operators' task browser: each filter walks its own index in id order (tasks_user_idx
  // already serves the user filter).
  ["tasks_platform_idx", "tasks", ["platform", "id"]],
  ["tasks_status_idx", "tasks", ["status", "id"]],
  ["tasks_channel_idx", "tasks", ["channel_id", "id"]],
  // The request log browser (request_logs_user_idx already serves the user filter).
  ["request_logs_channel_idx", "request_logs", ["channel_id", "id"]],
  ["request_logs_model_idx", "request_logs", ["model", "id"]],
  ["request_logs_status_idx", "request_logs", ["status", "id"]],
];

/** SQLite: the seconds of now. PostgreSQL's own is in the function below. */
const SQLITE_NOW = "cast(strftime('%s', 'now') as integer)";

/** The events a task's row writes on itself: [trigger, when, event, detail] (SQLite spelling). */
function sqliteTriggers(): string[] {
  const bounded = `(select count(*) from task_events e where e.task_id = new.id) < ${TASK_EVENTS_PER_TASK}`;
  const insert = (event: string, detail: string) =>
    `insert into task_events (task_id, at, event, detail) values (new.id, ${SQLITE_NOW}, '${event}', ${detail});`;
  return [
    `create trigger task_events_created after insert on tasks begin
       ${insert("created", "'on channel ' || new.channel_id")} end`,
    `create trigger task_events_status after update of status on tasks
       when old.status <> new.status and ${bounded} begin
       ${insert(
         "status",
         `old.status || ' -> ' || new.status
           || case when new.upstream_id is not null and old.upstream_id is null then ', upstream id ' || new.upstream_id else '' end
           || case when new.upstream_status is not null then ', upstream status ' || new.upstream_status else '' end
           || case when new.fail_reason <> '' then ': ' || new.fail_reason else '' end`,
       )} end`,
    `create trigger task_events_channel after update of channel_id on tasks
       when old.channel_id <> new.channel_id and ${bounded} begin
       ${insert("channel", "'channel ' || old.channel_id || ' -> ' || new.channel_id")} end`,
    `create trigger task_events_poll_failed after update of poll_errors on tasks
       when new.poll_errors > old.poll_errors and ${bounded} begin
       ${insert("poll_failed", "'poll failed (' || new.poll_errors || ' in a row)'")} end`,
  ];
}

const PG_FUNCTION = `
create or replace function task_events_record() returns trigger language plpgsql as $$
declare
  now_s bigint := extract(epoch from now())::bigint;
begin
  if tg_op = 'INSERT' then
    insert into task_events (task_id, at, event, detail) values (new.id, now_s, 'created', 'on channel ' || new.channel_id);
    return null;
  end if;
  -- Most updates (a poll that changed nothing) record nothing: leave before counting the events.
  if old.status = new.status and old.channel_id = new.channel_id and new.poll_errors <= old.poll_errors then
    return null;
  end if;
  if (select count(*) from task_events e where e.task_id = new.id) >= ${TASK_EVENTS_PER_TASK} then
    return null;
  end if;
  if old.status <> new.status then
    insert into task_events (task_id, at, event, detail) values (new.id, now_s, 'status',
      old.status || ' -> ' || new.status
      || case when new.upstream_id is not null and old.upstream_id is null then ', upstream id ' || new.upstream_id else '' end
      || case when new.upstream_status is not null then ', upstream status ' || new.upstream_status else '' end
      || case when new.fail_reason <> '' then ': ' || new.fail_reason else '' end);
  end if;
  if old.channel_id <> new.channel_id then
    insert into task_events (task_id, at, event, detail)
      values (new.id, now_s, 'channel', 'channel ' || old.channel_id || ' -> ' || new.channel_id);
  end if;
  if new.poll_errors > old.poll_errors then
    insert into task_events (task_id, at, event, detail)
      values (new.id, now_s, 'poll_failed', 'poll failed (' || new.poll_errors || ' in a row)');
  end if;
  return null;
end $$`;

/**
 * Indexes of the console's operator views, and each task's history: `task_events` rows written
 * by triggers on `tasks` itself, so every status move, channel switch and failed poll is recorded
 * in the very statement (and transaction) that makes it, whichever code path moves the task.
 */
export async function up(db: AnyDb): Promise<void> {
  for (const [name, table, columns] of INDEXES) {
    await db.schema.createIndex(name).on(table).columns(columns).execute();
  }
  await withId(db, db.schema.createTable("task_events"))
    .addColumn("task_id", "bigint", (c) => c.notNull())
    .addColumn("at", "bigint", (c) => c.notNull())
    .addColumn("event", "text", (c) => c.notNull())
    .addColumn("detail", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("task_events_task_idx").on("task_events").columns(["task_id", "id"]).execute();

  if (isPostgres(db)) {
    await sql.raw(PG_FUNCTION).execute(db);
    await sql`create trigger task_events_insert after insert on tasks
      for each row execute function task_events_record()`.execute(db);
    await sql`create trigger task_events_update after update of status, channel_id, poll_errors on tasks
      for each row execute function task_events_record()`.execute(db);
  } else {
    for (const trigger of sqliteTriggers()) await sql.raw(trigger).execute(db);
  }
}

export async function down(db: AnyDb): Promise<void> {
  if (isPostgres(db)) {
    await sql`drop trigger if exists task_events_update on tasks`.execute(db);
    await sql`drop trigger if exists task_events_insert on tasks`.execute(db);
    await sql`drop function if exists task_events_record()`.execute(db);
  } else {
    for (const t of ["created", "status", "channel", "poll_failed"]) {
      await sql.raw(`drop trigger if exists task_events_${t}`).execute(db);
    }
  }
  await db.schema.dropTable("task_events").ifExists().execute();
  for (const [name] of INDEXES) await db.schema.dropIndex(name).ifExists().execute();
}
