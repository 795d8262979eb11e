import { randomUUID } from "node:crypto";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchPng, type ImageEnv, startImageEnv } from "../images/harness.js";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { chargesOf, post } from "./harness.js";

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`Idempotency-Key on image generation [${kind}]`, () => {
    let env: ImageEnv;
    beforeAll(async () => {
      env = await startImageEnv(kind);
    });
    afterAll(async () => {
      await env?.close();
    });

    it("answers two identical requests with one key with the same image URLs and charges once", async () => {
      const user = await env.gw.createUser();
      const client = env.client(user.key);
      const key = randomUUID();
      const params = { model: "image-model-2-1k", prompt: "a lighthouse at dawn", n: 2 };
      const callsBefore = env.geminiCalls().length;
      const first = await client.images.generate(params, { headers: { "Idempotency-Key": key } });
      const callsOfFirst = env.geminiCalls().length - callsBefore;
      const second = await client.images.generate(params, { headers: { "Idempotency-Key": key } });
      expect(first.data).toHaveLength(2);
      expect(second).toEqual(first);
      for (const image of second.data ?? []) expect((await fetchPng(image.url as string)).width).toBeGreaterThan(0);
      // The repeat called no upstream and charged nothing.
      expect(callsOfFirst).toBeGreaterThan(0);
      expect(env.geminiCalls().length - callsBefore).toBe(callsOfFirst);
      expect(await chargesOf(env.gw, user.userId)).toHaveLength(1);
    });

    it("runs concurrent identical requests with one key once", async () => {
      const user = await env.gw.createUser();
      const key = randomUUID();
      const body = { model: "image-model", prompt: "five at once" };
      const answers = await Promise.all(
        Array.from({ length: 5 }, () =>
          post(env.gw.url, user.key, "/v1/images/generations", body, { "Idempotency-Key": key }),
        ),
      );
      for (const a of answers) expect(a.status).toBe(200);
      expect(new Set(answers.map((a) => JSON.stringify(a.body))).size).toBe(1);
      expect(answers.filter((a) => a.headers.get("idempotent-replayed") === "true")).toHaveLength(4);
      expect(await chargesOf(env.gw, user.userId)).toHaveLength(1);
    });

    it("replays a b64_json answer with the same bytes", async () => {
      const user = await env.gw.createUser();
      const key = randomUUID();
      const body = { model: "image-model", prompt: "inline bytes", response_format: "b64_json" };
      const first = await post(env.gw.url, user.key, "/v1/images/generations", body, { "Idempotency-Key": key });
      const second = await post(env.gw.url, user.key, "/v1/images/generations", body, { "Idempotency-Key": key });
      expect(first.status).toBe(200);
      expect(typeof first.body.data[0].b64_json).toBe("string");
      expect(second.body).toEqual(first.body);
      expect(await chargesOf(env.gw, user.userId)).toHaveLength(1);
    });

    it("refuses the same key with another body with 409 in the OpenAI shape, and charges nothing", async () => {
      const user = await env.gw.createUser();
      const client = env.client(user.key);
      const key = randomUUID();
      await client.images.generate({ model: "image-model", prompt: "first" }, { headers: { "Idempotency-Key": key } });
      const balance = await env.gw.balance(user.userId);
      const other = await post(
        env.gw.url,
        user.key,
        "/v1/images/generations",
        { model: "image-model", prompt: "second" },
        { "Idempotency-Key": key },
      );
      expect(other.status).toBe(409);
      expect(other.body).toEqual({
        error: {
          message: "This Idempotency-Key was used with a different request.",
          type: expect.any(String),
          param: null,
          code: "idempotency_key_reused",
        },
      });
      // The official client reads it as a conflict.
      const err = await client.images
        .generate({ model: "image-model", prompt: "third" }, { headers: { "Idempotency-Key": key } })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.ConflictError);
      expect((err as InstanceType<typeof OpenAI.ConflictError>).code).toBe("idempotency_key_reused");
      expect(await env.gw.balance(user.userId)).toBe(balance);
      expect(await chargesOf(env.gw, user.userId)).toHaveLength(1);
    });

    it("refuses an invalid Idempotency-Key with 400 in the OpenAI shape", async () => {
      const user = await env.gw.createUser();
      const res = await post(
        env.gw.url,
        user.key,
        "/v1/images/generations",
        { model: "image-model", prompt: "p" },
        { "Idempotency-Key": "k".repeat(300) },
      );
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
      expect(res.body.error.message.toLowerCase()).toContain("idempotency-key");
      expect(await chargesOf(env.gw, user.userId)).toHaveLength(0);
    });

    it("without the header, identical requests generate and charge twice as before", async () => {
      const user = await env.gw.createUser();
      const client = env.client(user.key);
      const params = { model: "image-model", prompt: "again" };
      const a = await client.images.generate(params);
      const b = await client.images.generate(params);
      expect(a.data?.[0]?.url).not.toBe(b.data?.[0]?.url);
      expect(await chargesOf(env.gw, user.userId)).toHaveLength(2);
    });
  });
}
