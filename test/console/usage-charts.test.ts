import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operatorListsOf } from "../../src/store/operator-lists.js";
import { RetentionRows } from "../../src/store/retention.js";
import { RetentionPruner } from "../../src/workers/retention-pruner.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { ConsoleClient, createConsoleUser, TEST_PASSWORD_COST } from "./console-client.js";

const kinds: StoreKind[] = HAS_PG ? ["sqlite", "postgres"] : ["sqlite"];
const DAY = 86_400;

/** The console's charts and the usage answers, before and after the request log's rows are pruned. */
describe.each(kinds)("charts and usage from the usage totals on %s", (kind) => {
  let gw: TestGateway;
  let alice: ConsoleClient;
  let aliceId: number;
  let bobId: number;
  const now = Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    gw = await startTestGateway(kind, { console: { passwordCost: TEST_PASSWORD_COST } });
    aliceId = await createConsoleUser(gw, "alice");
    bobId = await createConsoleUser(gw, "bob");
    alice = new ConsoleClient(gw.url);
    expect((await alice.login("alice")).status).toBe(200);
    const log = (at: number, userId: number, model: string, quota: number, over: Record<string, unknown> = {}) =>
      gw.gateway.ctx.requestLogs.log({
        created_at: at,
        request_id: `req-${at}-${model}-${quota}`,
        user_id: userId,
        token_id: null,
        channel_id: 5,
        surface: "content",
        model,
        prompt_tokens: 100,
        completion_tokens: 10,
        cached_tokens: 1,
        quota,
        latency_ms: 20,
        status: 200,
        error: null,
        ...over,
      });
    log(now - 60, aliceId, "m-a", 1_000);
    log(now - 30, aliceId, "m-b", 2_000, { channel_id: null, status: 502 });
    log(now - 3 * DAY, aliceId, "m-a", 4_000);
    log(now - 3 * DAY, bobId, "m-a", 8_000, { surface: "chat" });
    await gw.gateway.ctx.requestLogs.flush();
  });
  afterAll(async () => {
    await gw?.close();
  });

  const answers = async () => ({
    spend: (await alice.call("GET", "/console/api/me/spend?days=7")).body,
    week: (await gw.admin("GET", "/overview?minutes=10080&bucket_seconds=21600&by=model")).body.data.buckets,
    month: (await gw.admin("GET", "/overview?minutes=43200&bucket_seconds=86400&by=channel")).body.data.buckets,
    byUser: (await gw.admin("GET", "/usage?by=user")).body.data,
    usersOfModel: (await gw.admin("GET", "/usage?by=user&model=m-a")).body.data,
    aliceByModel: (await gw.admin("GET", `/usage?by=model&user_id=${aliceId}`)).body.data,
    byDay: (await gw.admin("GET", "/usage?by=day&model=m-a")).body.data,
    // One user's series in whole days (no route asks for it yet; the store answers it from the
    // daily totals).
    aliceDays: await operatorListsOf(gw.gateway.ctx.store.db).series({
      userId: aliceId,
      fromMs: (now - (now % DAY) - 6 * DAY) * 1000,
      toMs: (now - (now % DAY) + DAY) * 1000,
      bucketMs: DAY * 1000,
      by: "model",
    }),
  });

  it("draws the same charts and usage once the rows they came from are pruned", async () => {
    const before = await answers();
    // What was logged: alice 1,000 + 2,000 today and 4,000 three days ago; bob 8,000.
    const buckets = before.spend.buckets as { start: number; spend: number; series: Record<string, number> }[];
    expect(buckets).toHaveLength(7);
    expect(buckets[6]).toEqual({ start: now - (now % DAY), spend: 3_000, series: { "m-a": 1_000, "m-b": 2_000 } });
    expect(buckets[3]?.spend).toBe(4_000);
    const sum = (bs: any[], f: (b: any) => number) => bs.reduce((n, b) => n + f(b), 0);
    expect(sum(before.week, (b) => b.spend)).toBe(15_000);
    expect(sum(before.week, (b) => b.errors)).toBe(1);
    expect(sum(before.week, (b) => b.series["m-b"]?.spend ?? 0)).toBe(2_000);
    expect(sum(before.month, (b) => b.series["5"]?.requests ?? 0)).toBe(3);
    expect(sum(before.month, (b) => b.series.unknown?.requests ?? 0)).toBe(1);
    expect(before.byUser.rows.map((r: any) => [r.key, r.spend, r.requests])).toEqual([
      [bobId, 8_000, 1],
      [aliceId, 7_000, 3],
    ]);
    expect(before.byUser.rows[1]).toMatchObject({
      errors: 1,
      prompt_tokens: 300,
      completion_tokens: 30,
      cached_tokens: 3,
    });
    expect(before.usersOfModel.rows.map((r: any) => [r.key, r.spend])).toEqual([
      [bobId, 8_000],
      [aliceId, 5_000],
    ]);
    expect(before.aliceByModel.rows.map((r: any) => [r.key, r.spend])).toEqual([
      ["m-a", 5_000],
      ["m-b", 2_000],
    ]);
    expect(before.aliceDays.map((b: any) => b.spend)).toEqual([0, 0, 0, 4_000, 0, 0, 3_000]);
    expect(before.aliceDays[6]?.series["m-b"]).toEqual({ requests: 1, errors: 1, spend: 2_000 });
    expect(before.byDay.rows.map((r: any) => [r.key, r.spend])).toEqual([
      [now - 3 * DAY - ((now - 3 * DAY) % DAY), 12_000],
      [now - (now % DAY), 1_000],
    ]);

    // The retention prunes every row (five months on, 90 days kept: on PostgreSQL their months go).
    const pruner = new RetentionPruner(
      new RetentionRows(gw.gateway.ctx.store.db, gw.gateway.ctx.store.dialect),
      {
        days: { request_logs: 90, task_events: 90, webhook_deliveries: 30 },
        intervalMs: 60_000,
        batchRows: 2,
        batchPauseMs: 0,
      },
      { info: () => {}, warn: () => {} },
      () => now + 150 * DAY,
    );
    await pruner.round();
    expect(await gw.gateway.ctx.store.db.selectFrom("request_logs").selectAll().execute()).toEqual([]);

    expect(await answers()).toEqual(before);
    // Buckets finer than an hour are read from the rows: past the retention they are empty.
    const minutes = (await gw.admin("GET", "/overview?minutes=10&bucket_seconds=60")).body.data.buckets;
    expect(sum(minutes, (b) => b.requests)).toBe(0);
  });

  it("refuses a usage range it cannot count, naming the field", async () => {
    const backwards = await gw.admin("GET", `/usage?from=${now}&to=${now - 2 * DAY}`);
    expect(backwards.status).toBe(400);
    expect(JSON.stringify(backwards.body)).toContain("to");
    const tooLong = await gw.admin("GET", `/usage?from=${now - 400 * DAY}&to=${now}`);
    expect(tooLong.status).toBe(400);
    expect(JSON.stringify(tooLong.body)).toContain("from");
    expect((await gw.admin("GET", "/usage?by=token")).status).toBe(400);
    expect((await gw.admin("GET", "/usage?user_id=abc")).status).toBe(400);
  });
});
