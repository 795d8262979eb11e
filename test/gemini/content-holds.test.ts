import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { type ContentHarness, MODEL, postContent, startContentHarness, userText } from "./harness.js";

/** Debt is bounded by the hold: a call's worst case is held before any upstream call. */
for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`content holds and credit lines [${kind}]`, () => {
    let f: ContentHarness;
    beforeAll(async () => {
      f = await startContentHarness(kind);
    });
    afterAll(async () => {
      await f?.close();
    });
    beforeEach(() => {
      // The upstream misbehaves on purpose in some tests: it thinks though asked not to.
      f.sim.state.options.gemini!.text!.thoughtsTokens = 0;
    });

    const generate = (key: string, body: unknown) =>
      postContent(f.gw, `${MODEL}:generateContent`, body, { "x-goog-api-key": key });
    const setCreditLine = async (userId: number, creditLine: number) => {
      const res = await f.gw.admin("PATCH", `/users/${userId}`, { credit_line: creditLine });
      expect(res.status).toBe(200);
      expect(res.body.data.credit_line).toBe(creditLine);
    };
    const openCharges = (userId: number) =>
      f.gw.gateway.ctx.store.db
        .selectFrom("charges")
        .selectAll()
        .where("user_id", "=", userId)
        .where("state", "=", "open")
        .execute();

    it("refuses a 2 MB functionResponse with maxOutputTokens 1 on a small balance before any upstream call", async () => {
      const user = await f.gw.createUser({ quota: 10 });
      await setCreditLine(user.userId, 1_000);
      const before = f.sim.state.received.length;
      const body = {
        contents: [
          { role: "user", parts: [{ text: "look this up" }] },
          { role: "model", parts: [{ functionCall: { name: "lookup", args: { q: "x" } } }] },
          {
            role: "user",
            parts: [{ functionResponse: { name: "lookup", response: { result: "r".repeat(2 * 1024 * 1024) } } }],
          },
        ],
        generationConfig: { maxOutputTokens: 1 },
      };
      const res = await generate(user.key, body);
      expect(res.status).toBe(403);
      const error = ((await res.json()) as { error: { status: string; message: string } }).error;
      expect(error.status).toBe("PERMISSION_DENIED");
      expect(error.message).toMatch(/may cost up to \d+ quota \(1048576 prompt and 24577 output tokens at most\)/);
      expect(f.sim.state.received.length).toBe(before);
      expect(await f.gw.balance(user.userId)).toBe(10);
    });

    it("refuses 20 concurrent thinking-model calls whose thinking the small balance cannot cover", async () => {
      const user = await f.gw.createUser({ quota: 40 });
      const before = f.sim.state.received.length;
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          generate(user.key, userText("think hard", { generationConfig: { maxOutputTokens: 16 } })),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(403));
      expect(f.sim.state.received.length).toBe(before);
      expect(await f.gw.balance(user.userId)).toBe(40);
    });

    it("ends 20 concurrent calls of an upstream that thinks past its budget at no less than minus the credit line", async () => {
      f.sim.state.options.gemini!.text!.thoughtsTokens = 5_000;
      const user = await f.gw.createUser({ quota: 200 });
      await setCreditLine(user.userId, 300);
      const body = userText("no thinking please", {
        generationConfig: { maxOutputTokens: 8, thinkingConfig: { thinkingBudget: 0 } },
      });
      const answers = await Promise.all(Array.from({ length: 20 }, () => generate(user.key, body)));
      const statuses = answers.map((a) => a.status);
      expect(statuses).toContain(200);
      for (const s of statuses) expect([200, 403]).toContain(s);
      const balance = await f.gw.balance(user.userId);
      expect(balance).toBeGreaterThanOrEqual(-300);
      expect(await f.gw.gateway.ctx.ledger.ledgerSum(user.userId)).toBe(balance);
      // What the credit line did not allow is recorded on the charges, not dropped silently.
      const charges = await f.gw.gateway.ctx.store.db
        .selectFrom("charges")
        .selectAll()
        .where("user_id", "=", user.userId)
        .execute();
      expect(charges.every((c) => c.state !== "open")).toBe(true);
      expect(charges.reduce((sum, c) => sum + Number(c.uncollected), 0)).toBeGreaterThan(0);
      expect(f.gw.logs.some((l) => l.includes("content cost above the hold"))).toBe(true);
    });

    it("settles an absurd reported usage down to the credit line instead of leaving the charge open", async () => {
      f.sim.state.options.gemini!.text!.thoughtsTokens = 1e300;
      const user = await f.gw.createUser({ quota: 1_000 });
      await setCreditLine(user.userId, 100);
      const res = await generate(
        user.key,
        userText("absurd", { generationConfig: { maxOutputTokens: 8, thinkingConfig: { thinkingBudget: 0 } } }),
      );
      expect(res.status).toBe(200);
      expect(await f.gw.balance(user.userId)).toBe(-100);
      const [charge] = await f.gw.gateway.ctx.store.db
        .selectFrom("charges")
        .selectAll()
        .where("user_id", "=", user.userId)
        .execute();
      expect(charge?.state).toBe("settled");
      expect(Number(charge?.uncollected)).toBeGreaterThan(1e15);
    });

    it("keeps a token within its quota_limit the same way", async () => {
      f.sim.state.options.gemini!.text!.thoughtsTokens = 5_000;
      const user = await f.gw.createUser({ quota: 10_000_000, token: { quotaLimit: 150 } });
      const body = userText("no thinking please", {
        generationConfig: { maxOutputTokens: 8, thinkingConfig: { thinkingBudget: 0 } },
      });
      const answers = await Promise.all(Array.from({ length: 20 }, () => generate(user.key, body)));
      expect(answers.map((a) => a.status)).toContain(200);
      const token = await f.gw.gateway.ctx.store.db
        .selectFrom("tokens")
        .select(["used_quota", "quota_limit"])
        .where("id", "=", user.tokenId)
        .executeTakeFirstOrThrow();
      expect(Number(token.used_quota)).toBeLessThanOrEqual(150);
      expect(10_000_000 - (await f.gw.balance(user.userId))).toBe(Number(token.used_quota));
      expect(await openCharges(user.userId)).toEqual([]);
    });

    it("answers 400 naming the field for output amounts beyond a safe integer or the model's maximum", async () => {
      const user = await f.gw.createUser({ quota: 10_000_000 });
      const before = f.sim.state.received.length;
      for (const [generationConfig, field] of [
        [{ maxOutputTokens: 9007199254740991 }, "generationConfig.maxOutputTokens"],
        [{ maxOutputTokens: 1e300 }, "generationConfig.maxOutputTokens"],
        [{ maxOutputTokens: 1_000_000 }, "generationConfig.maxOutputTokens"],
        [{ candidateCount: 1e300 }, "generationConfig.candidateCount"],
        [{ thinkingConfig: { thinkingBudget: 1e300 } }, "generationConfig.thinkingConfig.thinkingBudget"],
      ] as const) {
        for (const method of ["generateContent", "streamGenerateContent?alt=sse"]) {
          const res = await postContent(f.gw, `${MODEL}:${method}`, userText("hi", { generationConfig }), {
            "x-goog-api-key": user.key,
          });
          expect(res.status).toBe(400);
          const error = ((await res.json()) as { error: { status: string; message: string } }).error;
          expect(error.status).toBe("INVALID_ARGUMENT");
          expect(error.message).toContain(field);
        }
      }
      expect(f.sim.state.received.length).toBe(before);
      expect(await f.gw.balance(user.userId)).toBe(10_000_000);
    });
  });
}
