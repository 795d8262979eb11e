import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Migrator } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/store/database.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import { MIGRATIONS } from "../../src/store/migrations/index.js";
import type { StoreKind } from "../support/gateway.js";
import { createTestDatabase, HAS_PG } from "../support/postgres.js";

/** Charges written before the lifecycle get their state from the ledger and the tasks. */
for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`charge lifecycle migration [${kind}]`, () => {
    const cleanups: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c();
    });

    async function storeAt007(): Promise<Store> {
      let url: string;
      if (kind === "sqlite") {
        const dir = mkdtempSync(path.join(os.tmpdir(), "mg-migrate-"));
        cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
        url = `sqlite:${path.join(dir, "gateway.sqlite")}`;
      } else {
        const db = await createTestDatabase();
        cleanups.push(db.drop);
        url = db.url;
      }
      const store = openStore(url);
      cleanups.push(() => store.close());
      const migrator = new Migrator({ db: store.db, provider: { getMigrations: async () => MIGRATIONS } });
      const { error } = await migrator.migrateTo("007_task_limits");
      if (error) throw error;
      return store;
    }

    it("fills in refunded, settled, sold and running-task charges", async () => {
      const store = await storeAt007();
      const db = store.db as any;
      const now = Math.floor(Date.now() / 1000);
      const user = await db
        .insertInto("users")
        .values({ name: "u", group: "default", quota: 1_000, status: "enabled", created_at: now, updated_at: now })
        .returning("id")
        .executeTakeFirstOrThrow();
      const row = (reference: string, kind: string, amount: number) => ({
        user_id: user.id,
        token_id: null,
        kind,
        amount,
        reference,
        note: "",
        created_at: now,
      });
      await db
        .insertInto("ledger")
        .values([
          row("content:refunded", "charge", -100),
          row("content:refunded", "refund", 100),
          row("content:settled", "charge", -100),
          row("content:settled", "settle", 60),
          row("image:sold", "charge", -80),
          row("task:task_running", "charge", -50),
          row("task:task_done", "charge", -50),
        ])
        .execute();
      const task = (taskId: string, status: string) => ({
        task_id: taskId,
        platform: "audioa",
        user_id: user.id,
        token_id: null,
        group: "default",
        channel_id: 1,
        quota: 50,
        action: "MUSIC",
        status,
        fail_reason: "",
        submit_time: now,
        start_time: 0,
        finish_time: 0,
        progress: "0%",
        properties: "{}",
        data: "{}",
        request_body: "{}",
        next_poll_at: 0,
        lease_until: 0,
        created_at: now,
        updated_at: now,
      });
      await db
        .insertInto("tasks")
        .values([task("task_running", "IN_PROGRESS"), task("task_done", "SUCCESS")])
        .execute();

      await migrateToLatest(store);
      const charges = await db.selectFrom("charges").selectAll().orderBy("reference").execute();
      const byRef = Object.fromEntries(
        charges.map((c: any) => [
          c.reference,
          { state: c.state, held: Number(c.held), settled: c.settled === null ? null : Number(c.settled) },
        ]),
      );
      expect(byRef).toEqual({
        "content:refunded": { state: "refunded", held: 100, settled: null },
        "content:settled": { state: "settled", held: 100, settled: 40 },
        "image:sold": { state: "settled", held: 80, settled: 80 },
        "task:task_done": { state: "settled", held: 50, settled: 50 },
        "task:task_running": { state: "open", held: 50, settled: null },
      });
      const userRow = await db.selectFrom("users").select("credit_line").executeTakeFirstOrThrow();
      expect(Number(userRow.credit_line)).toBe(0);
    });
  });
}
