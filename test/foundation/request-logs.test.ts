import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RequestLogWriter } from "../../src/store/request-logs.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";

/** A row with every column set. */
const FULL_ROW = {
  user_id: 7,
  token_id: 8,
  channel_id: 9,
  surface: "images",
  model: "image-model",
  prompt_tokens: 11,
  completion_tokens: 12,
  cached_tokens: 3,
  quota: 1234,
  latency_ms: 56,
  status: 502,
  error: "upstream failed",
};

/** A row of a request with no user, token or channel. */
function bareRow(requestId: string, createdAt: number) {
  return {
    created_at: createdAt,
    request_id: requestId,
    surface: "content",
    model: "m",
    prompt_tokens: 0,
    completion_tokens: 0,
    cached_tokens: 0,
    quota: 0,
    latency_ms: 0,
    status: 200,
  };
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`request log [${kind}]`, () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startTestGateway(kind);
    });
    afterAll(async () => {
      await gw?.close();
    });

    it("writes every queued row once, in batches larger than one statement, absent ids and errors as null", async () => {
      const logs = gw.gateway.ctx.requestLogs;
      const now = Math.floor(Date.now() / 1000);
      for (let i = 0; i < 250; i++) {
        logs.log(i % 2 === 0 ? bareRow(`batch-${i}`, now) : { created_at: now, request_id: `batch-${i}`, ...FULL_ROW });
      }
      await logs.flush();
      const rows = await gw.gateway.ctx.store.db
        .selectFrom("request_logs")
        .selectAll()
        .where("request_id", "like", "batch-%")
        .execute();
      expect(rows).toHaveLength(250);
      expect(new Set(rows.map((r) => r.request_id)).size).toBe(250);
      const bare = rows.find((r) => r.request_id === "batch-0");
      expect(bare).toMatchObject({
        user_id: null,
        prompt_tokens: 0,
        quota: 0,
        latency_ms: 0,
        error: null,
        status: 200,
      });
      const full = rows.find((r) => r.request_id === "batch-1");
      expect(full).toMatchObject(FULL_ROW);
    });

    it("keeps text as written (quotes, braces, backslashes, commas, the word NULL) and drops only a row the store refuses", async () => {
      const logs = gw.gateway.ctx.requestLogs;
      const now = Math.floor(Date.now() / 1000);
      const texts = ['a "quoted", {braced} \\ back\\slash', "NULL", "", " spaced ", "ünï\ncode"];
      texts.forEach((text, i) => {
        logs.log({ created_at: now, request_id: `text-${i}`, ...FULL_ROW, model: text, error: text });
      });
      // A 32-bit status out of range: the store refuses this row (and its batch), the others are written.
      logs.log({ created_at: now, request_id: "text-refused", ...FULL_ROW, status: 2 ** 40 });
      await logs.flush();
      const rows = await gw.gateway.ctx.store.db
        .selectFrom("request_logs")
        .select(["request_id", "model", "error"])
        .where("request_id", "like", "text-%")
        .orderBy("request_id")
        .execute();
      const expected = texts.map((text, i) => ({ request_id: `text-${i}`, model: text, error: text }));
      expect(rows).toEqual(
        kind === "postgres" ? expected : [...expected, expect.objectContaining({ request_id: "text-refused" })],
      );
    });
  });
}

describe("request-log writer under a steady stream of requests", () => {
  const row = (i: number) => bareRow(`r-${i}`, 0);
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

  /** A store whose insert takes one turn of the event loop, as the group commit's does. */
  function recordingStore() {
    const batches: string[][] = [];
    const insert = async (rows: { request_id: string }[]) => {
      await turn();
      batches.push(rows.map((r) => r.request_id));
    };
    return { batches, insert };
  }

  it("writes full batches, not an insert per turn, while rows keep coming during its inserts", async () => {
    const store = recordingStore();
    const writer = new RequestLogWriter(
      store.insert,
      (err) => {
        throw err;
      },
      { intervalMs: 3_600_000, maxBatch: 50, maxQueue: 100_000 },
    );
    // 5 rows a turn for 200 turns: a flush is due every 10 turns, and each insert takes a turn.
    for (let t = 0; t < 200; t++) {
      for (let i = 0; i < 5; i++) writer.log(row(t * 5 + i));
      await turn();
    }
    await writer.stop();
    const written = store.batches.flat();
    expect(written).toEqual(Array.from({ length: 1000 }, (_, i) => `r-${i}`));
    // 1,000 rows in batches of 50 take 20 inserts; one per turn would have been nearly 200.
    expect(store.batches.length).toBeLessThanOrEqual(25);
    expect(store.batches.slice(0, -1).every((b) => b.length >= 45)).toBe(true);
  });

  it("makes one flush of many asked for while it waits for the one before it", async () => {
    let release: () => void = () => undefined;
    const batches: number[] = [];
    const writer = new RequestLogWriter(
      async (rows) => {
        if (batches.length === 0) await new Promise<void>((resolve) => (release = resolve));
        batches.push(rows.length);
      },
      (err) => {
        throw err;
      },
      { intervalMs: 3_600_000, maxBatch: 3, maxQueue: 100 },
    );
    for (let i = 0; i < 3; i++) writer.log(row(i)); // the first flush begins and holds its insert
    await turn();
    const asked: Promise<void>[] = [];
    for (let i = 3; i < 10; i++) {
      writer.log(row(i)); // from the third row on, each asks for a flush
      asked.push(writer.flush());
      await turn();
    }
    expect(new Set(asked).size).toBe(1);
    release();
    await Promise.all(asked);
    expect(batches).toEqual([3, 3, 3, 1]);
  });

  it("loses no row logged while its last flush writes, and goes on after an error handler threw", async () => {
    const store = recordingStore();
    let failNext = true;
    const errors: unknown[] = [];
    const writer = new RequestLogWriter(
      async (rows) => {
        if (failNext && rows.length === 1) {
          failNext = false;
          throw new Error("refused");
        }
        await store.insert(rows);
      },
      (err) => {
        errors.push(err);
        throw err;
      },
      { intervalMs: 3_600_000, maxBatch: 10, maxQueue: 100 },
    );
    writer.log(row(0));
    await expect(writer.flush()).rejects.toThrow("refused");
    for (let i = 1; i < 4; i++) writer.log(row(i));
    const stopping = writer.stop();
    for (let i = 4; i < 6; i++) writer.log(row(i)); // while the stop's flush writes
    await stopping;
    expect(errors).toHaveLength(1);
    expect(store.batches.flat()).toEqual(["r-1", "r-2", "r-3", "r-4", "r-5"]);
  });
});
