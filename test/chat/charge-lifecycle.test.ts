import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatRequestFromOpenAi } from "../../src/api/openai-chat/request.js";
import type { ChatEvent } from "../../src/core/chat/canonical.js";
import type { ChatCall, ChatSink } from "../../src/core/chat/ports.js";
import { streamChat } from "../../src/core/chat/relay.js";
import { GuardedFetcher } from "../../src/net/guarded-fetch.js";
import { Charges } from "../../src/store/charges.js";
import { chatRelayDeps } from "../../src/wiring/metering.js";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { settlingRecorder } from "../support/settling-recorder.js";
import { CHAT_MODEL, type ChatHarness, openAiClient, startChatHarness, UPSTREAM_TYPES } from "./harness.js";

const HOUR = 3_600_000;

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  for (const type of UPSTREAM_TYPES) {
    describe.skipIf(kind === "postgres" && !HAS_PG)(`chat charge lifecycle over ${type} [${kind}]`, () => {
      let f: ChatHarness;
      let fetcher: GuardedFetcher;
      beforeAll(async () => {
        f = await startChatHarness(kind, type);
        fetcher = new GuardedFetcher({ allowPrivate: false });
      });
      afterAll(async () => {
        await fetcher?.close();
        await f?.close();
      });

      const ctx = () => f.gw.gateway.ctx;
      const reaper = () => f.gw.gateway.chargeReaper;
      const charges = () => new Charges(ctx().store.db, ctx().store.dialect);

      /** A streamed chat call as the OpenAI surface makes it, with an injected clock and sink. */
      function chatCall(reference: string, userId: number, tokenId: number, prompt: string): ChatCall {
        return {
          requestId: reference.slice("chat:".length),
          reference,
          caller: { userId, tokenId, group: "default" },
          model: CHAT_MODEL,
          request: chatRequestFromOpenAi(
            { model: CHAT_MODEL, stream: true, messages: [{ role: "user", content: prompt }] },
            ctx().config.images.maxImageBytes,
          ),
          signal: new AbortController().signal,
        };
      }

      it("tells a stream's sink the call is settling after its last event; its end comes after the settlement", async () => {
        const { userId, tokenId } = await f.gw.createUser({ quota: 10_000_000 });
        const base = chatRelayDeps(ctx(), ctx().logger, fetcher);
        const recorder = settlingRecorder(base.ledger);
        const reference = `chat:settling-order-${type}`;
        const call = chatCall(reference, userId, tokenId, "a short answer");
        await streamChat({ ...base, ledger: recorder.ledger }, call, recorder.sink);
        expect(recorder.events()).toBeGreaterThan(1);
        expect(recorder.afterLastEvent()).toEqual(["settling", "settle", "end"]);
        expect((await charges().find(reference))?.state).toBe("settled");
      });

      it("records an abandoned stream's usage on its open charge, and the reaper settles it to that", async () => {
        const { userId, tokenId } = await f.gw.createUser({ quota: 10_000_000 });
        let clock = Date.now();
        // Each event takes 1.5 s of the injected clock: the usage is recorded at most every 2 s.
        const deps = { ...chatRelayDeps(ctx(), ctx().logger, fetcher), usageRecordMs: 2_000, now: () => clock };
        const events: ChatEvent[] = [];
        let releaseSink!: () => void;
        const sinkHeld = new Promise<void>((resolve) => {
          releaseSink = resolve;
        });
        let reachedFourth!: () => void;
        const fourth = new Promise<void>((resolve) => {
          reachedFourth = resolve;
        });
        // The process "dies" at the fourth event: nothing more happens on its side.
        const sink: ChatSink = {
          async event(event) {
            events.push(event);
            clock += 1_500;
            if (events.length === 4) {
              reachedFourth();
              await sinkHeld;
            }
          },
          settling() {},
          async fail() {},
          async end() {},
        };
        const reference = `chat:killed-stream-${type}`;
        const abandoned = streamChat(deps, chatCall(reference, userId, tokenId, "[chunks=8] a long answer"), sink);
        await fourth;
        let open = await charges().find(reference);
        for (let i = 0; i < 50 && open?.seen === null; i++) {
          await new Promise((r) => setTimeout(r, 10));
          open = await charges().find(reference);
        }
        expect(open?.state).toBe("open");
        // The hold's close-by time was set when it was taken, and each record pushed it on.
        expect(Number(open?.close_by)).toBeGreaterThan(clock);
        const seen = Number(open?.seen);
        expect(seen).toBeGreaterThan(0);
        expect(seen).toBeLessThan(Number(open?.held));
        // Not yet due: the reaper leaves a stream that is still reporting alone.
        await reaper().reap(clock);
        expect((await charges().find(reference))?.state).toBe("open");
        await reaper().reap(clock + 2 * ctx().config.charges.openMs);
        expect(await charges().find(reference)).toMatchObject({ state: "settled" });
        expect(10_000_000 - (await f.gw.balance(userId))).toBe(seen);
        // The abandoned call, should it ever go on, cannot close the charge a second time.
        releaseSink();
        await abandoned;
        expect(10_000_000 - (await f.gw.balance(userId))).toBe(seen);
        expect(await ctx().ledger.ledgerSum(userId)).toBe(await f.gw.balance(userId));
      });

      it("leaves a settlement that fails open with what the call cost, and the reaper lands it later", async () => {
        const { userId, key } = await f.gw.createUser({ quota: 10_000_000 });
        const db = ctx().store.db;
        if (kind === "sqlite") {
          await sql`create trigger refuse_chat_settle before insert on ledger when new.kind = 'settle'
            begin select raise(abort, 'settlement refused'); end`.execute(db);
        } else {
          await sql`create function refuse_chat_settle() returns trigger language plpgsql as $$
            begin if new.kind = 'settle' then raise exception 'settlement refused'; end if; return new; end $$`.execute(
            db,
          );
          await sql`create trigger refuse_chat_settle before insert on ledger for each row execute function refuse_chat_settle()`.execute(
            db,
          );
        }
        let reference: string;
        try {
          const answer = await openAiClient(f.gw, key).chat.completions.create({
            model: CHAT_MODEL,
            messages: [{ role: "user", content: "bill me later" }],
          });
          expect(answer.choices[0]?.message.content).toBeTruthy();
          const open = await db
            .selectFrom("charges")
            .selectAll()
            .where("user_id", "=", userId)
            .where("state", "=", "open")
            .execute();
          expect(open).toHaveLength(1);
          reference = open[0]!.reference;
          expect(reference.startsWith("chat:")).toBe(true);
          expect(Number(open[0]!.seen)).toBeGreaterThan(0);
        } finally {
          if (kind === "sqlite") await sql`drop trigger refuse_chat_settle`.execute(db);
          else {
            await sql`drop trigger refuse_chat_settle on ledger`.execute(db);
            await sql`drop function refuse_chat_settle()`.execute(db);
          }
        }
        const seen = Number((await charges().find(reference))?.seen);
        await reaper().reap(Date.now() + 2 * HOUR);
        expect(await charges().find(reference)).toMatchObject({ state: "settled" });
        expect(10_000_000 - (await f.gw.balance(userId))).toBe(seen);
        expect(await ctx().ledger.ledgerSum(userId)).toBe(await f.gw.balance(userId));
      });
    });
  }
}
