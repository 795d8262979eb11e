import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { type ContentHarness, contentLedger, MODEL, postContent, startContentHarness } from "./harness.js";

const BAD_BODIES: [string, unknown, RegExp][] = [
  ["missing contents", { generationConfig: { temperature: 0.2 } }, /contents is required/],
  ["contents that is not an array", { contents: "hello" }, /contents/],
  ["empty contents", { contents: [] }, /contents/],
  [
    "a part text that is not a string",
    { contents: [{ role: "user", parts: [{ text: 42 }] }] },
    /contents\[0\]\.parts\[0\]\.text/,
  ],
  ["parts that is not an array", { contents: [{ role: "user", parts: { text: "hi" } }] }, /contents\[0\]\.parts/],
  ["an unknown role", { contents: [{ role: "system", parts: [{ text: "hi" }] }] }, /contents\[0\]\.role/],
  [
    "inlineData without data",
    { contents: [{ parts: [{ inlineData: { mimeType: "image/png" } }] }] },
    /inlineData\.data/,
  ],
  [
    "a temperature that is a string",
    { contents: [{ parts: [{ text: "hi" }] }], generationConfig: { temperature: "hot" } },
    /generationConfig\.temperature/,
  ],
  [
    "maxOutputTokens of 0",
    { contents: [{ parts: [{ text: "hi" }] }], generationConfig: { maxOutputTokens: 0 } },
    /generationConfig\.maxOutputTokens/,
  ],
  [
    "a fractional maxOutputTokens",
    { contents: [{ parts: [{ text: "hi" }] }], generationConfig: { maxOutputTokens: 1.5 } },
    /generationConfig\.maxOutputTokens/,
  ],
];

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`content request validation [${kind}]`, () => {
    let f: ContentHarness;
    let key: string;
    let userId: number;
    beforeAll(async () => {
      f = await startContentHarness(kind);
      ({ key, userId } = await f.gw.createUser());
    });
    afterAll(async () => {
      await f?.close();
    });

    for (const [what, body, field] of BAD_BODIES) {
      for (const method of ["generateContent", "streamGenerateContent?alt=sse"]) {
        it(`refuses ${what} with 400 INVALID_ARGUMENT naming the field (${method.split("?")[0]})`, async () => {
          const res = await postContent(f.gw, `${MODEL}:${method}`, body, { "x-goog-api-key": key });
          expect(res.status).toBe(400);
          expect(res.headers.get("content-type")).toContain("application/json");
          const json = (await res.json()) as any;
          expect(json).toMatchObject({ error: { code: 400, status: "INVALID_ARGUMENT" } });
          expect(json.error.message).toMatch(field);
        });
      }
    }

    it("refuses a body that is not JSON with 400 INVALID_ARGUMENT", async () => {
      for (const type of ["application/json", "text/plain", "application/x-www-form-urlencoded"]) {
        const res = await postContent(f.gw, `${MODEL}:generateContent`, "contents=hello{", {
          "x-goog-api-key": key,
          "content-type": type,
        });
        expect(res.status).toBe(400);
        expect((await res.json()) as any).toMatchObject({ error: { code: 400, status: "INVALID_ARGUMENT" } });
      }
    });

    it("refuses an unknown alt value with 400 INVALID_ARGUMENT", async () => {
      const res = await postContent(
        f.gw,
        `${MODEL}:streamGenerateContent?alt=xml`,
        { contents: [{ parts: [{ text: "hi" }] }] },
        {
          "x-goog-api-key": key,
        },
      );
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).error.status).toBe("INVALID_ARGUMENT");
    });

    it("charges nothing for a refused body", async () => {
      expect(await contentLedger(f.gw, userId)).toEqual([]);
    });

    it("passes fields it does not know upstream untouched", async () => {
      const body = {
        contents: [
          {
            role: "user",
            parts: [{ text: "describe" }, { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } }],
          },
          { role: "model", parts: [{ text: "sure" }] },
          {
            role: "user",
            parts: [
              { fileData: { mimeType: "video/mp4", fileUri: "https://example.com/v.mp4" } },
              { futurePart: { x: 1 } },
            ],
          },
        ],
        systemInstruction: { parts: [{ text: "be brief" }] },
        tools: [{ googleSearch: {} }],
        safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }],
        generationConfig: {
          temperature: 0.4,
          maxOutputTokens: 200,
          thinkingConfig: { thinkingBudget: 0 },
          futureKnob: "on",
        },
        cachedContent: "cachedContents/abc",
      };
      const res = await postContent(f.gw, `${MODEL}:generateContent`, body, { "x-goog-api-key": key });
      expect(res.status).toBe(200);
      expect(f.sim.received.at(-1)?.body).toEqual(body);
    });
  });
}
