import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
        logs.log(
          i % 2 === 0
            ? {
                created_at: now,
                request_id: `batch-${i}`,
                surface: "content",
                model: "m",
                prompt_tokens: 0,
                completion_tokens: 0,
                cached_tokens: 0,
                quota: 0,
                latency_ms: 0,
                status: 200,
              }
            : { created_at: now, request_id: `batch-${i}`, ...FULL_ROW },
        );
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
