import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../../src/simulator/server.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../../support/gateway.js";
import { HAS_PG } from "../../support/postgres.js";
import { CONTENT_BODY, callGateway } from "../harness.js";
import { errorProblem, surfaceOf } from "../surface-shapes.js";

/**
 * Text no store can hold as it is (a NUL character, a UTF-16 surrogate without its pair) is
 * refused where it enters, with a 400 in the surface's shape naming the field; and should a
 * request-log batch still fail, its rows are written one by one, so one request never costs
 * another its row.
 */
const NUL = "\u0000";
const LONE_HIGH = "\ud83d";
const LONE_LOW = "\ude00";

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`text a store cannot hold [${kind}]`, () => {
    let gw: TestGateway;
    let sim: Simulator;
    let token: string;
    let userId: number;
    beforeAll(async () => {
      sim = await startSimulator({ seed: 5 });
      gw = await startTestGateway(kind, { logLevel: "warn" });
      await gw.createChannel({ type: "task-relay", baseUrl: sim.url, models: ["audioa"] });
      await gw.createChannel({ type: "gemini", baseUrl: sim.url, models: ["gemini-2.5-flash", "image-model"] });
      const user = await gw.createUser({ quota: 500_000_000 });
      token = user.key;
      userId = user.userId;
    });
    afterAll(async () => {
      await gw?.close();
      await sim?.close();
    });

    /**
     * A lone surrogate has no UTF-8 form: in a URL it can only come as the bytes of one
     * (`%ED%A0%BD`), which is not valid UTF-8 and is refused as a malformed URL; a NUL is `%00`.
     */
    const inUrl = (bad: string) =>
      bad === NUL
        ? "%00"
        : Buffer.from([0xed, ((bad.charCodeAt(0) >> 6) & 0x3f) | 0x80, (bad.charCodeAt(0) & 0x3f) | 0x80])
            .toString("hex")
            .replace(/(..)/g, "%$1");
    const cases = (bad: string): Array<[string, string, unknown, string]> => [
      ["GET", `/audioa/fetch/task_${inUrl(bad)}`, undefined, "id"],
      ["POST", "/audioa/fetch", { ids: [`task_${bad}`] }, "ids[0]"],
      ["POST", "/audioa/submit/MUSIC", { prompt: `la${bad}la` }, "prompt"],
      ["POST", "/v1/images/generations", { model: `image-model${bad}`, prompt: "a boat" }, "model"],
      ["POST", "/v1/images/generations", { model: "image-model", prompt: `a${bad}b` }, "prompt"],
      ["POST", `/v1beta/models/gemini${inUrl(bad)}:generateContent`, CONTENT_BODY, "target"],
      ["POST", `/v1beta/models/gemini-2.5-flash:generateContent?alt=${inUrl(bad)}`, CONTENT_BODY, "alt"],
      [
        "POST",
        "/v1beta/models/gemini-2.5-flash:generateContent",
        { contents: [{ role: "user", parts: [{ text: `a${bad}` }] }] },
        "contents[0].parts[0].text",
      ],
      ["POST", "/v1beta/models/gemini-2.5-flash:generateContent?alt=sse&x=1", { [`k${bad}`]: 1 }, ""],
      ["GET", `/api/admin/tasks?task_id=${inUrl(bad)}`, undefined, "task_id"],
      ["POST", "/api/admin/users", { name: `n${bad}` }, "name"],
    ];

    it.each([
      ["NUL", NUL],
      ["an unpaired high surrogate", LONE_HIGH],
      ["an unpaired low surrogate", LONE_LOW],
    ])("%s anywhere a client writes text is a 400 naming the field, in the surface's shape", async (_name, bad) => {
      const before = await gw.balance(userId);
      for (const [method, path, body, field] of cases(bad)) {
        const auth = path.startsWith("/api/admin") ? gw.adminKey : token;
        const headers: Record<string, string> = path.startsWith("/v1beta")
          ? { "x-goog-api-key": auth }
          : { authorization: `Bearer ${auth}` };
        // Lone surrogates cannot travel as UTF-8: they are sent as JSON escapes, as a client would.
        const text = body === undefined ? undefined : JSON.stringify(body).replace(/[\ud800-\udfff]/g, escapeUnit);
        const res = await callGateway(gw.url, method, path, {
          headers: { ...headers, ...(text === undefined ? {} : { "content-type": "application/json" }) },
          body: text,
        });
        if (bad !== NUL && path.includes("?")) {
          // The query parser turns bytes that are not UTF-8 into U+FFFD: storable text, no refusal due.
          expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(500);
          continue;
        }
        expect(res.status, `${method} ${path}: ${res.text}`).toBe(400);
        expect(errorProblem(surfaceOf(path), 400, res.body), path).toBeNull();
        if (bad === NUL || !path.includes("%")) {
          expect(res.text, path).toMatch(/NUL character or an unpaired surrogate/);
          if (field) expect(res.text, path).toContain(field);
        }
      }
      expect(await gw.balance(userId)).toBe(before);
    });

    it("31 concurrent requests, one with a NUL in the image model: that one is refused, every other row is kept", async () => {
      await gw.gateway.ctx.requestLogs.flush();
      const before = await countRows(gw);
      const calls = Array.from({ length: 31 }, (_, i) => {
        if (i === 15) {
          return callGateway(gw.url, "POST", "/v1/images/generations", {
            headers: { authorization: `Bearer ${token}` },
            body: { model: `image-model${NUL}`, prompt: "a boat" },
          });
        }
        return i % 2 === 0
          ? callGateway(gw.url, "POST", "/v1/images/generations", {
              headers: { authorization: `Bearer ${token}` },
              body: { model: "image-model", prompt: `boat ${i}` },
            })
          : callGateway(gw.url, "POST", "/v1beta/models/gemini-2.5-flash:generateContent", {
              headers: { "x-goog-api-key": token },
              body: CONTENT_BODY,
            });
      });
      const answers = await Promise.all(calls);
      expect(answers.map((a) => a.status)).toEqual(answers.map((_, i) => (i === 15 ? 400 : 200)));
      await gw.gateway.ctx.requestLogs.flush();
      expect((await countRows(gw)) - before).toBe(30);
    });

    it("a batch the store refuses is written again row by row: only the refused row is lost", async () => {
      const logs = gw.gateway.ctx.requestLogs;
      await logs.flush();
      const now = Math.floor(Date.now() / 1000);
      const row = (i: number, model: string) => ({
        created_at: now,
        request_id: `fallback-${kind}-${i}`,
        surface: "images",
        model,
        prompt_tokens: 0,
        completion_tokens: 0,
        cached_tokens: 0,
        quota: 0,
        latency_ms: 1,
        status: 200,
      });
      // A row that slipped past every check: PostgreSQL refuses its NUL, SQLite stores it.
      for (let i = 0; i < 31; i++) logs.log(row(i, i === 15 ? `image${NUL}model` : "image-model"));
      await logs.flush();
      const kept = await gw.gateway.ctx.store.db
        .selectFrom("request_logs")
        .select("request_id")
        .where("request_id", "like", `fallback-${kind}-%`)
        .execute();
      const ids = new Set(kept.map((r) => r.request_id));
      for (let i = 0; i < 31; i++) if (i !== 15) expect(ids.has(`fallback-${kind}-${i}`), `row ${i}`).toBe(true);
      expect(ids.size).toBe(kind === "postgres" ? 30 : 31);
    });
  });
}

function escapeUnit(unit: string): string {
  return `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

async function countRows(gw: TestGateway): Promise<number> {
  const row = await gw.gateway.ctx.store.db
    .selectFrom("request_logs")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
