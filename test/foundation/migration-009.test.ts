import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Migrator } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/store/database.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import { MIGRATIONS } from "../../src/store/migrations/index.js";
import type { StoreKind } from "../support/gateway.js";
import { createTestDatabase, HAS_PG } from "../support/postgres.js";

const migrator = (store: Store) => new Migrator({ db: store.db, provider: { getMigrations: async () => MIGRATIONS } });

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`migration 009 on existing rows [${kind}]`, () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "mg-m009-"));
    let drop: (() => Promise<void>) | null = null;
    afterAll(async () => {
      if (drop) await drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it("counts each user's unfinished tasks and keeps existing top-up references per user", async () => {
      let url = `sqlite:${path.join(dir, "gateway.sqlite")}`;
      if (kind === "postgres") {
        const db = await createTestDatabase();
        url = db.url;
        drop = db.drop;
      }
      const store = openStore(url);
      try {
        const before = await migrator(store).migrateTo("007_task_limits");
        expect(before.error).toBeUndefined();
        const db = store.db as any;
        const now = 1_700_000_000;
        const user = (name: string) => ({
          name,
          group: "default",
          quota: 100,
          status: "enabled",
          created_at: now,
          updated_at: now,
        });
        const [a, b] = await Promise.all([
          db.insertInto("users").values(user("a")).returning("id").executeTakeFirstOrThrow(),
          db.insertInto("users").values(user("b")).returning("id").executeTakeFirstOrThrow(),
        ]);
        const task = (userId: number, i: number, status: string) => ({
          task_id: `task_${userId}_${i}`,
          platform: "audioa",
          user_id: userId,
          group: "default",
          channel_id: 1,
          quota: 1,
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
          .values([
            task(a.id, 1, "IN_PROGRESS"),
            task(a.id, 2, "NOT_START"),
            task(a.id, 3, "SUCCESS"),
            task(a.id, 4, "FAILURE"),
            task(b.id, 1, "QUEUED"),
          ])
          .execute();
        await db
          .insertInto("ledger")
          .values([
            { user_id: a.id, kind: "topup", amount: 100, reference: "invoice-1", note: "", created_at: now },
            { user_id: a.id, kind: "charge", amount: -1, reference: "task:task_x", note: "", created_at: now },
          ])
          .execute();

        await migrateToLatest(store);
        const users = await db.selectFrom("users").select(["id", "tasks_unfinished"]).orderBy("id").execute();
        expect(users.map((u: { tasks_unfinished: number }) => Number(u.tasks_unfinished))).toEqual([2, 1]);
        const refs = await db.selectFrom("ledger").select(["kind", "reference"]).orderBy("id").execute();
        expect(refs).toEqual([
          { kind: "topup", reference: `user:${a.id}:invoice-1` },
          { kind: "charge", reference: "task:task_x" },
        ]);
        // The same invoice for user b is now a reference of its own.
        await db
          .insertInto("ledger")
          .values({
            user_id: b.id,
            kind: "topup",
            amount: 5,
            reference: `user:${b.id}:invoice-1`,
            note: "",
            created_at: now,
          })
          .execute();
      } finally {
        await store.close();
      }
    });
  });
}
