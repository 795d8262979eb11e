import { CompiledQuery, type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type RequestLogFilter,
  requestLogQuery,
  type TaskListFilter,
  taskListQuery,
} from "../../src/store/operator-lists.js";
import type { Database } from "../../src/store/schema.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";

const TASKS = 100_000;
const STATUSES = ["NOT_START", "SUBMITTED", "QUEUED", "IN_PROGRESS", "SUCCESS", "FAILURE"];
const T0 = 1_800_000_000;
/** Next poll time of the seeded tasks (ms): far ahead, so the gateway's workers leave them alone. */
const FAR = 2 ** 50;

/** 100,000 tasks in one statement: task i has status STATUSES[i % 6], channel 100 + i % 5, user u0 + i % 10. */
async function seedTasks(db: Kysely<Database>, kind: StoreKind, u0: number): Promise<void> {
  const columns = sql.raw(`(task_id, platform, user_id, token_id, "group", channel_id, quota, action, status,
    fail_reason, submit_time, start_time, finish_time, progress, properties, data, request_body, next_poll_at,
    lease_until, created_at, updated_at)`);
  const status = sql.raw(`case i % 6 ${STATUSES.map((s, n) => `when ${n} then '${s}'`).join(" ")} end`);
  const values = sql`'seed-' || i, case when i % 2 = 0 then 'audioa' else 'audiob' end, ${sql.lit(u0)} + i % 10,
    null, 'default', 100 + i % 5, 10, 'MUSIC', ${status}, '', ${sql.lit(T0)} + i, 0, 0, '0%', '{}', '{}', '{}', ${sql.lit(FAR)}, 0,
    ${sql.lit(T0)} + i, ${sql.lit(T0)} + i`;
  if (kind === "postgres") {
    await sql`insert into tasks ${columns} select ${values} from generate_series(0, ${sql.lit(TASKS - 1)}) as i`.execute(
      db,
    );
    await sql`analyze tasks`.execute(db);
  } else {
    await sql`insert into tasks ${columns}
      with recursive seq(i) as (select 0 union all select i + 1 from seq where i < ${sql.lit(TASKS - 1)})
      select ${values} from seq`.execute(db);
    await sql`analyze`.execute(db);
  }
}

/** 100,000 request-log rows: row i has status 200 or (every 7th) 502, channel 100 + i % 5, model m-(i % 3). */
async function seedRequestLogs(db: Kysely<Database>, kind: StoreKind, u0: number): Promise<void> {
  const columns = sql.raw(`(created_at, request_id, user_id, token_id, channel_id, surface, model, prompt_tokens,
    completion_tokens, cached_tokens, quota, latency_ms, status, error)`);
  const values = sql`${sql.lit(T0)} + i, 'r-' || i, ${sql.lit(u0)} + i % 10, null, 100 + i % 5, 'images',
    'm-' || (i % 3), 0, 1, 0, 5, 100, case when i % 7 = 0 then 502 else 200 end, null`;
  if (kind === "postgres") {
    await sql`insert into request_logs ${columns} select ${values} from generate_series(0, ${sql.lit(TASKS - 1)}) as i`.execute(
      db,
    );
    await sql`analyze request_logs`.execute(db);
  } else {
    await sql`insert into request_logs ${columns}
      with recursive seq(i) as (select 0 union all select i + 1 from seq where i < ${sql.lit(TASKS - 1)})
      select ${values} from seq`.execute(db);
    await sql`analyze`.execute(db);
  }
}

/** The plan's lines (SQLite) or its JSON (PostgreSQL), as text. */
async function planOf(db: Kysely<Database>, kind: StoreKind, compiled: CompiledQuery): Promise<string> {
  const q = compiled;
  const prefix = kind === "postgres" ? "explain (format json) " : "explain query plan ";
  const res = await db.executeQuery(CompiledQuery.raw(prefix + q.sql, [...q.parameters]));
  return JSON.stringify(res.rows);
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`task browser over 100,000 tasks [${kind}]`, () => {
    let gw: TestGateway;
    let u0: number;
    let firstId: number;

    beforeAll(async () => {
      gw = await startTestGateway(kind, { logLevel: "warn" });
      const ids: number[] = [];
      for (let n = 0; n < 10; n++) ids.push((await gw.createUser({ quota: 0 })).userId);
      u0 = ids[0] as number;
      expect(ids).toEqual(ids.map((_, n) => u0 + n));
      const db = gw.gateway.ctx.store.db;
      await seedTasks(db, kind, u0);
      await seedRequestLogs(db, kind, u0);
      const first = await db.selectFrom("tasks").select("id").where("task_id", "=", "seed-0").executeTakeFirstOrThrow();
      firstId = Number(first.id);
    }, 120_000);
    afterAll(async () => {
      await gw?.close();
    });

    it("answers a filtered page and the next one through the API", async () => {
      // status SUCCESS (i % 6 = 4), channel 102 (i % 5 = 2), audioa (even): i = 22 mod 30, user u0 + 2.
      const query = `status=SUCCESS&channel_id=102&platform=audioa&user_id=${u0 + 2}&limit=50`;
      const page = await gw.admin("GET", `/tasks?${query}`);
      expect(page.status).toBe(200);
      const expected = Array.from({ length: 50 }, (_, k) => `seed-${22 + 30 * k}`);
      expect(page.body.data.map((t: any) => t.task_id)).toEqual(expected);
      const last = page.body.data.at(-1);
      expect(last.id).toBe(firstId + 22 + 30 * 49);
      const next = await gw.admin("GET", `/tasks?${query}&after=${last.id}`);
      expect(next.body.data[0].task_id).toBe(`seed-${22 + 30 * 50}`);
      expect(next.body.data).toHaveLength(50);
      const end = await gw.admin("GET", `/tasks?${query}&after=${firstId + TASKS - 10}`);
      expect(end.body.data).toEqual([]);
      expect((await gw.admin("GET", `/tasks?status=SUCCESS&channel_id=102&user_id=${u0 + 3}`)).body.data).toEqual([]);
      const byChannel = await gw.admin("GET", "/tasks?channel_id=104&limit=3");
      expect(byChannel.body.data.map((t: any) => t.task_id)).toEqual(["seed-4", "seed-9", "seed-14"]);
    });

    it("walks an index for every combination of filters, never the whole table", async () => {
      const db = gw.gateway.ctx.store.db;
      const filters: (keyof TaskListFilter)[] = ["userId", "status", "platform", "channelId"];
      const value = { userId: u0 + 2, status: "SUCCESS", platform: "audioa", channelId: 102 };
      for (let mask = 1; mask < 16; mask++) {
        for (const after of [undefined, firstId + 50_000]) {
          const f: TaskListFilter = { limit: 50, after };
          filters.forEach((name, bit) => {
            if (mask & (1 << bit)) (f as any)[name] = value[name as keyof typeof value];
          });
          const plan = await planOf(db, kind, taskListQuery(db, f).compile());
          if (kind === "sqlite") {
            // One of the filter indexes, or (a filter most rows pass, after a cursor) the id range itself.
            expect(plan, JSON.stringify(f)).toMatch(
              /SEARCH tasks USING (COVERING )?INDEX tasks_\w+|SEARCH tasks USING INTEGER PRIMARY KEY \(rowid>\?\)/,
            );
            expect(plan, JSON.stringify(f)).not.toMatch(/TEMP B-TREE|SCAN tasks/);
          } else {
            expect(plan, JSON.stringify(f)).toMatch(/Index Scan|Index Only Scan|Bitmap Index Scan/);
            expect(plan, JSON.stringify(f)).not.toContain("Seq Scan");
          }
        }
      }
    });

    it("browses 100,000 request-log rows through an index for every combination of filters", async () => {
      const db = gw.gateway.ctx.store.db;
      const page = await gw.admin("GET", `/request-logs?status=502&channel_id=101&model=m-2&limit=3`);
      // 502: i = 0 mod 7; channel 101: i = 1 mod 5; m-2: i = 2 mod 3; so i = 56 mod 105, newest first.
      const newest = Array.from({ length: TASKS }, (_, i) => i)
        .filter((i) => i % 105 === 56)
        .reverse()
        .slice(0, 3);
      expect(page.body.data.map((r: any) => r.request_id)).toEqual(newest.map((i) => `r-${i}`));
      const filters: (keyof RequestLogFilter)[] = ["userId", "channelId", "model", "status"];
      const value = { userId: u0 + 6, channelId: 101, model: "m-2", status: 502 };
      for (let mask = 1; mask < 16; mask++) {
        const f: RequestLogFilter = { limit: 50, after: 60_000 };
        filters.forEach((name, bit) => {
          if (mask & (1 << bit)) (f as any)[name] = value[name as keyof typeof value];
        });
        const plan = await planOf(db, kind, requestLogQuery(db, f).compile());
        if (kind === "sqlite") {
          expect(plan, JSON.stringify(f)).toMatch(
            /SEARCH request_logs USING (COVERING )?INDEX request_logs_\w+_idx|SEARCH request_logs USING INTEGER PRIMARY KEY \(rowid<\?\)/,
          );
          expect(plan, JSON.stringify(f)).not.toMatch(/TEMP B-TREE|SCAN request_logs/);
        } else {
          expect(plan, JSON.stringify(f)).toMatch(/Index Scan|Index Only Scan|Bitmap Index Scan/);
          // The log is partitioned by month: a month with no rows (the coming ones, the default
          // partition) is read by a sequential scan of nothing, costed 0. No month with rows is.
          const seqScanCosts = [...plan.matchAll(/"Node Type":"Seq Scan"[^}]*?"Total Cost":([\d.]+)/g)].map((m) =>
            Number(m[1]),
          );
          expect(seqScanCosts, JSON.stringify(f)).toEqual(seqScanCosts.map(() => 0));
        }
      }
    });
  });
}
