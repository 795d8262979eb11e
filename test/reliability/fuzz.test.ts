import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { type FuzzRequest, fuzzViolation, type Operation, operationsOf, requestFor } from "./fuzz-requests.js";
import { callGateway, isAlive, ledgerFigures } from "./harness.js";

/** Cases per store; fixed seed, so a failure repeats. */
const NUM_RUNS = 400;
const SEED = 20_260_707;

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`fuzzing every endpoint [${kind}]`, () => {
    let gw: TestGateway;
    let sim: Simulator;
    let operations: Operation[];
    let token: string;

    beforeAll(async () => {
      sim = await startSimulator({
        seed: 9,
        taskRelay: { completeAfterMs: 200 },
        generateRecord: { completeAfterMs: 200, callbacks: false },
      });
      gw = await startTestGateway(kind, {
        logLevel: "info",
        // Every guess is a fresh 401 here, not a 429 after the first hundred.
        limits: { authFailuresPerMinute: 1_000_000 },
        tasks: { enabledActions: ["REPLACE", "INSTRUMENTALS_SWAP"], pollIntervalMs: 50, workerTickMs: 20 },
      });
      await gw.createChannel({ type: "task-relay", baseUrl: sim.url, models: ["audioa"] });
      await gw.createChannel({ type: "generate-record", baseUrl: sim.url, models: ["audiob"] });
      await gw.createChannel({
        type: "gemini",
        baseUrl: sim.url,
        models: ["gemini-2.5-flash", "image-model", "image-model-pro-2k", "image-model-2-0.5k"],
      });
      token = (await gw.createUser({ quota: 2_000_000_000 })).key;
      const doc = await callGateway(gw.url, "GET", "/openapi.json");
      expect(doc.status).toBe(200);
      operations = operationsOf(doc.body);
    });
    afterAll(async () => {
      await gw?.close();
      await sim?.close();
    });

    it("lists every public surface in the OpenAPI document", () => {
      const paths = new Set(operations.map((o) => o.path));
      for (const p of [
        "/audioa/submit/MUSIC",
        "/audioa/fetch/{id}",
        "/audiob/fetch",
        "/v1/images/generations",
        "/v1beta/models/{model}:generateContent",
        "/v1beta/models/{model}:streamGenerateContent",
        "/v1/chat/completions",
        "/v1/messages",
        "/api/admin/users",
      ]) {
        expect(paths.has(p), p).toBe(true);
      }
    });

    /** Request ids of content, chat and image calls answered 200: each must have its request-log row. */
    const answered: string[] = [];

    it(`never answers 5xx or out of shape, over ${NUM_RUNS} random requests`, async () => {
      const violations: string[] = [];
      let cases = 0;
      await fc.assert(
        fc.asyncProperty(requestFor(operations, { token, adminKey: gw.adminKey }), async (req: FuzzRequest) => {
          cases += 1;
          const answer = await callGateway(gw.url, req.method, req.path, { headers: req.headers, body: req.body });
          const violation = fuzzViolation(req, answer);
          // Calls that are billed; listings and token counts are free and write no request-log row.
          const billed =
            /^\/(v1beta\/models\/[^/]+:(generate|streamGenerate)Content|v1\/images\/generations|v1\/chat\/completions|v1\/messages$)/;
          if (answer.status === 200 && req.method === "POST" && billed.test(req.path.split("?")[0] ?? "")) {
            answered.push(String(answer.headers["x-request-id"]));
          }
          // Collected rather than thrown, so one run reports every distinct fault at once.
          if (violation) violations.push(`${violation} -> ${answer.text.slice(0, 200)}`);
        }),
        { numRuns: NUM_RUNS, seed: SEED },
      );
      expect(violations).toEqual([]);
      expect(cases).toBeGreaterThanOrEqual(NUM_RUNS);
      process.stdout.write(`[reliability] fuzz cases [${kind}]: ${cases}, violations: ${violations.length}\n`);
    }, 240_000);

    it("is still up afterwards, logged no bug of its own, and the ledger holds", async () => {
      expect(await isAlive(gw)).toBe(true);
      expect(gw.logs.filter((l) => l.includes('"unhandled error"'))).toEqual([]);
      expect((await ledgerFigures(gw)).violations).toEqual([]);
    });

    it("kept the request-log row of every content, chat and image call it answered", async () => {
      await gw.gateway.ctx.requestLogs.flush();
      const rows = await gw.gateway.ctx.store.db.selectFrom("request_logs").select("request_id").execute();
      const logged = new Set(rows.map((r) => r.request_id));
      expect(answered.length).toBeGreaterThan(0);
      expect(answered.filter((id) => !logged.has(id))).toEqual([]);
    });
  });
}
