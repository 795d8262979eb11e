import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ContentChunk, ContentSink } from "../../src/core/content/ports.js";
import { streamContentCall } from "../../src/core/content/relay.js";
import { Charges } from "../../src/store/charges.js";
import { TaskStore } from "../../src/store/tasks.js";
import { contentRelayDeps } from "../../src/wiring/metering.js";
import { type ContentHarness, MODEL, postContent, startContentHarness, userText } from "../gemini/harness.js";
import { type StoreKind, startTestGateway } from "../support/gateway.js";
import { createTestDatabase, HAS_PG } from "../support/postgres.js";
import { settlingRecorder } from "../support/settling-recorder.js";

const HOUR = 3_600_000;

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`charge lifecycle [${kind}]`, () => {
    let f: ContentHarness;
    beforeAll(async () => {
      f = await startContentHarness(kind);
    });
    afterAll(async () => {
      await f?.close();
    });

    const ctx = () => f.gw.gateway.ctx;
    const reaper = () => f.gw.gateway.chargeReaper;
    const charges = () => new Charges(ctx().store.db, ctx().store.dialect);
    const rowsOf = async (reference: string) =>
      (await ctx().ledger.entries((await charges().find(reference))!.user_id, { limit: 1000 }))
        .filter((r) => r.reference === reference)
        .map((r) => ({ kind: r.kind, amount: Number(r.amount) }));

    it("keeps an open charge until its close-by time, then settles it to the usage seen", async () => {
      const { userId, tokenId } = await f.gw.createUser({ quota: 1_000 });
      const now = Date.now();
      await ctx().ledger.charge({ userId, tokenId, amount: 600, reference: "content:seen", closeBy: now + HOUR });
      await ctx().ledger.noteUsage("content:seen", 250, now + HOUR);
      await reaper().reap(now);
      expect((await charges().find("content:seen"))?.state).toBe("open");
      await reaper().reap(now + 2 * HOUR);
      const charge = await charges().find("content:seen");
      expect(charge).toMatchObject({ state: "settled", close_reason: expect.stringContaining("usage seen") });
      expect(Number(charge?.settled)).toBe(250);
      expect(await f.gw.balance(userId)).toBe(750);
      expect(await rowsOf("content:seen")).toEqual([
        { kind: "settle", amount: 350 },
        { kind: "charge", amount: -600 },
      ]);
    });

    it("refunds an overdue open charge on which no usage was seen", async () => {
      const { userId, tokenId } = await f.gw.createUser({ quota: 1_000 });
      const now = Date.now();
      await ctx().ledger.charge({ userId, tokenId, amount: 480, reference: "image:orphan", closeBy: now + 1_000 });
      expect(await f.gw.balance(userId)).toBe(520);
      await reaper().reap(now + 2_000);
      expect(await charges().find("image:orphan")).toMatchObject({
        state: "refunded",
        close_reason: expect.stringContaining("refunded"),
      });
      expect(await f.gw.balance(userId)).toBe(1_000);
      // Closed once: a late closer changes nothing.
      expect((await ctx().ledger.settle("image:orphan", 480)).applied).toBe(false);
      expect(await f.gw.balance(userId)).toBe(1_000);
    });

    it("closes at start what an earlier run of the instance left open, but not task charges", async () => {
      const { userId, tokenId } = await f.gw.createUser({ quota: 1_000 });
      const far = Date.now() + 24 * HOUR;
      await ctx().ledger.charge({ userId, tokenId, amount: 100, reference: "content:left", closeBy: far });
      await ctx().ledger.noteUsage("content:left", 40, far);
      await ctx().ledger.charge({ userId, tokenId, amount: 100, reference: "task:left", closeBy: far });
      // A run that starts after these charges were opened.
      await reaper().recoverLeftOpen(Math.floor(Date.now() / 1000) + 1);
      expect(await charges().find("content:left")).toMatchObject({ state: "settled" });
      expect((await charges().find("task:left"))?.state).toBe("open");
      expect(await f.gw.balance(userId)).toBe(1_000 - 40 - 100);
    });

    it("fails and refunds a task still running at its charge's close-by time, and settles a task's sale", async () => {
      const { userId, tokenId } = await f.gw.createUser({ quota: 1_000 });
      const tasks = new TaskStore(ctx().store.db, ctx().ledger, ctx().store.dialect);
      const now = Date.now();
      const newTask = (taskId: string) =>
        tasks.insertCharged({
          taskId,
          platform: "audioa",
          userId,
          tokenId,
          group: "default",
          channelId: 1,
          quota: 300,
          action: "MUSIC",
          properties: "{}",
          requestBody: "{}",
          callbackSecret: null,
          sendDeadlineMs: now + HOUR,
          chargeCloseBy: now + 1_000,
        });
      const stuck = await newTask("task_stuck_past_close_by");
      await tasks.markSent(stuck.id, "up-1", 1, now + HOUR);
      const sold = await newTask("task_sold_before_close_by");
      await tasks.markSent(sold.id, "up-2", 1, now + HOUR);
      expect(await tasks.succeed(sold, "SUBMITTED", [], "SUCCESS", "m")).toBe(true);
      expect(await f.gw.balance(userId)).toBe(400);
      await reaper().reap(now + 2_000);
      expect((await tasks.findOwned(userId, "task_stuck_past_close_by"))?.status).toBe("FAILURE");
      expect((await charges().find("task:task_stuck_past_close_by"))?.state).toBe("refunded");
      expect((await charges().find("task:task_sold_before_close_by"))?.state).toBe("settled");
      expect(await f.gw.balance(userId)).toBe(700);
    });

    it("settles a killed stream's open charge to the usage it recorded, by the reaper", async () => {
      const { userId, tokenId } = await f.gw.createUser({ quota: 10_000_000 });
      const text = f.sim.state.options.gemini!.text!;
      text.chunks = 6;
      // The process "dies" after the third event: nothing more happens on its side.
      let clock = Date.now();
      // Each event takes 1.5 s of the injected clock: the usage is recorded once, at the third event.
      const deps = { ...contentRelayDeps(ctx(), ctx().logger), usageRecordMs: 2_000, now: () => clock };
      const events: ContentChunk[] = [];
      let releaseSink!: () => void;
      const sinkHeld = new Promise<void>((resolve) => {
        releaseSink = resolve;
      });
      let reachedThird!: () => void;
      const third = new Promise<void>((resolve) => {
        reachedThird = resolve;
      });
      const sink: ContentSink = {
        async event(chunk) {
          events.push(chunk);
          clock += 1_500;
          if (events.length === 3) {
            reachedThird();
            await sinkHeld;
          }
        },
        settling() {},
        async fail() {},
        async end() {},
      };
      const reference = "content:killed-stream";
      const abandoned = streamContentCall(
        deps,
        {
          requestId: "killed-stream",
          reference,
          caller: { userId, tokenId, group: "default" },
          model: MODEL,
          body: userText("a long answer"),
          bodyBytes: 80,
          signal: new AbortController().signal,
        },
        sink,
      );
      await third;
      let open = await charges().find(reference);
      for (let i = 0; i < 50 && open?.seen === null; i++) {
        await new Promise((r) => setTimeout(r, 10));
        open = await charges().find(reference);
      }
      expect(open?.state).toBe("open");
      const seen = Number(open?.seen);
      expect(seen).toBeGreaterThan(0);
      expect(seen).toBeLessThan(Number(open?.held));
      await reaper().reap(clock + 2 * ctx().config.charges.openMs);
      expect(await charges().find(reference)).toMatchObject({ state: "settled" });
      expect(10_000_000 - (await f.gw.balance(userId))).toBe(seen);
      // The abandoned call, should it ever go on, cannot close the charge a second time.
      releaseSink();
      await abandoned;
      expect(10_000_000 - (await f.gw.balance(userId))).toBe(seen);
      text.chunks = undefined;
    });

    it("tells a stream's sink the call is settling after its last event; its end comes after the settlement", async () => {
      const { userId, tokenId } = await f.gw.createUser({ quota: 10_000_000 });
      const base = contentRelayDeps(ctx(), ctx().logger);
      const recorder = settlingRecorder(base.ledger);
      await streamContentCall(
        { ...base, ledger: recorder.ledger },
        {
          requestId: "settling-order",
          reference: "content:settling-order",
          caller: { userId, tokenId, group: "default" },
          model: MODEL,
          body: userText("a short answer"),
          bodyBytes: 80,
          signal: new AbortController().signal,
        },
        recorder.sink,
      );
      expect(recorder.events()).toBeGreaterThan(1);
      expect(recorder.afterLastEvent()).toEqual(["settling", "settle", "end"]);
      expect((await charges().find("content:settling-order"))?.state).toBe("settled");
    });

    it("leaves a settlement that fails open with what the call cost, and the reaper lands it later", async () => {
      const { userId, key } = await f.gw.createUser({ quota: 10_000_000 });
      const db = ctx().store.db;
      if (kind === "sqlite") {
        await sql`create trigger refuse_settle before insert on ledger when new.kind = 'settle'
          begin select raise(abort, 'settlement refused'); end`.execute(db);
      } else {
        await sql`create function refuse_settle() returns trigger language plpgsql as $$
          begin if new.kind = 'settle' then raise exception 'settlement refused'; end if; return new; end $$`.execute(
          db,
        );
        await sql`create trigger refuse_settle before insert on ledger for each row execute function refuse_settle()`.execute(
          db,
        );
      }
      let reference: string;
      try {
        const res = await postContent(f.gw, `${MODEL}:generateContent`, userText("bill me later"), {
          "x-goog-api-key": key,
        });
        expect(res.status).toBe(200);
        const open = await db
          .selectFrom("charges")
          .selectAll()
          .where("user_id", "=", userId)
          .where("state", "=", "open")
          .execute();
        expect(open).toHaveLength(1);
        reference = open[0]!.reference;
        expect(Number(open[0]!.seen)).toBeGreaterThan(0);
        // Retried while it keeps failing: it stays open.
        await reaper().reap(Date.now() + HOUR);
        expect((await charges().find(reference))?.state).toBe("open");
      } finally {
        if (kind === "sqlite") await sql`drop trigger refuse_settle`.execute(db);
        else {
          await sql`drop trigger refuse_settle on ledger`.execute(db);
          await sql`drop function refuse_settle()`.execute(db);
        }
      }
      const seen = Number((await charges().find(reference))?.seen);
      await reaper().reap(Date.now() + 2 * HOUR);
      expect(await charges().find(reference)).toMatchObject({ state: "settled" });
      expect(10_000_000 - (await f.gw.balance(userId))).toBe(seen);
      expect(await ctx().ledger.ledgerSum(userId)).toBe(await f.gw.balance(userId));
    });

    it("closes every content and image charge it opens: none stays open after the answers", async () => {
      const { userId, key } = await f.gw.createUser({ quota: 10_000_000 });
      for (const path of [`${MODEL}:generateContent`, `${MODEL}:streamGenerateContent?alt=sse`]) {
        const res = await postContent(f.gw, path, userText("hello"), { "x-goog-api-key": key });
        expect(res.status).toBe(200);
        await res.text();
      }
      const open = await charges().openCounts(Date.now());
      const mine = await ctx().store.db.selectFrom("charges").select(["state"]).where("user_id", "=", userId).execute();
      expect(mine.map((c) => c.state)).toEqual(["settled", "settled"]);
      expect(open.overdue).toBe(0);
    });
  });
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`charge recovery at start [${kind}]`, () => {
    it("a restarted instance closes at start the calls its earlier run left open", async () => {
      const dataDir = mkdtempSync(path.join(os.tmpdir(), "mg-restart-"));
      const pgDb = kind === "postgres" ? await createTestDatabase() : null;
      const databaseUrl = pgDb?.url;
      try {
        const first = await startTestGateway(kind, {}, { dataDir, databaseUrl, keepStore: true });
        let userId: number;
        try {
          const user = await first.createUser({ quota: 1_000 });
          userId = user.userId;
          const ledger = first.gateway.ctx.ledger;
          const later = Date.now() + HOUR;
          await ledger.charge({ ...user, amount: 100, reference: "content:cut-stream", closeBy: later });
          await ledger.noteUsage("content:cut-stream", 30, later);
          await ledger.charge({ ...user, amount: 200, reference: "image:cut-call", closeBy: later });
          await ledger.charge({ ...user, amount: 300, reference: "task:still-running", closeBy: later });
          // These calls were opened by the earlier run: a second before this one starts.
          await sql`update charges set created_at = created_at - 5`.execute(first.gateway.ctx.store.db);
        } finally {
          await first.close();
        }
        const second = await startTestGateway(kind, {}, { dataDir, databaseUrl, keepStore: true });
        try {
          const found = new Charges(second.gateway.ctx.store.db, second.gateway.ctx.store.dialect);
          expect(await found.find("content:cut-stream")).toMatchObject({ state: "settled" });
          expect(await found.find("image:cut-call")).toMatchObject({ state: "refunded" });
          expect((await found.find("task:still-running"))?.state).toBe("open");
          expect(await second.balance(userId)).toBe(1_000 - 30 - 300);
          expect(second.logs.some((l) => l.includes("earlier run of this instance left open"))).toBe(true);
        } finally {
          await second.close();
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
        await pgDb?.drop();
      }
    });
  });
}
