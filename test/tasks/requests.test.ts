import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { call, eventually, sentRow, startTaskEnv, submit, type TaskEnv, waitForTask } from "./harness.js";

function expectEnvelopeError(res: { status: number; body: any }, status: number, messagePart?: string) {
  expect(res.status).toBe(status);
  expect(Object.keys(res.body)).toEqual(["code", "message", "data"]);
  expect(res.body.data).toBeNull();
  expect(typeof res.body.code).toBe("string");
  expect(res.body.code).not.toBe("success");
  if (messagePart) expect(res.body.message).toContain(messagePart);
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`task requests: scoping, limits and bad input [${kind}]`, () => {
    let env: TaskEnv;
    let owner: { userId: number; key: string };
    let stranger: { userId: number; key: string };
    let ownTaskIds: string[];
    beforeAll(async () => {
      env = await startTaskEnv(kind, {
        sim: { taskRelay: { completeAfterMs: 200 }, generateRecord: { completeAfterMs: 200 } },
      });
      owner = await env.gw.createUser({ quota: 10_000_000 });
      stranger = await env.gw.createUser({ quota: 10_000_000 });
      ownTaskIds = [];
      for (let i = 0; i < 2; i++) {
        const res = await submit(env.gw.url, owner.key, "audioa", "MUSIC", { prompt: `song ${i}` });
        ownTaskIds.push(res.body.data);
      }
    });
    afterAll(async () => {
      await env?.close();
    });

    it("shows a task only to its owner: 404 on a single fetch, absent from a batch", async () => {
      const { url } = env.gw;
      const [a, b] = ownTaskIds as [string, string];
      expect((await call(url, owner.key, "GET", `/audioa/fetch/${a}`)).status).toBe(200);
      expectEnvelopeError(await call(url, stranger.key, "GET", `/audioa/fetch/${a}`), 404);
      expectEnvelopeError(await call(url, owner.key, "GET", "/audioa/fetch/task_unknown"), 404);
      // The same id under the other family is not found either.
      expectEnvelopeError(await call(url, owner.key, "GET", `/audiob/fetch/${a}`), 404);

      const mine = await call(url, owner.key, "POST", "/audioa/fetch", { ids: [b, "task_nope", a, a] });
      expect(mine.status).toBe(200);
      expect(mine.body.code).toBe("success");
      expect(mine.body.message).toBe("");
      expect(mine.body.data.map((r: any) => r.task_id)).toEqual([b, a]);

      const theirs = await call(url, stranger.key, "POST", "/audioa/fetch", { ids: [a, b] });
      expect(theirs.status).toBe(200);
      expect(theirs.body.data).toEqual([]);
      const other = await call(url, owner.key, "POST", "/audiob/fetch", { ids: [a, b] });
      expect(other.body.data).toEqual([]);
    });

    it("returns the same record from single and batch fetch", async () => {
      const { url } = env.gw;
      const id = ownTaskIds[0] as string;
      await waitForTask(url, owner.key, "audioa", id);
      const single = await call(url, owner.key, "GET", `/audioa/fetch/${id}`);
      const batch = await call(url, owner.key, "POST", "/audioa/fetch", { ids: [id], action: "MUSIC" });
      expect(batch.body.data).toEqual([single.body.data]);
    });

    it("caps a batch fetch at 100 ids", async () => {
      const { url } = env.gw;
      const ids = Array.from({ length: 100 }, (_, i) => `task_${i}`);
      expect((await call(url, owner.key, "POST", "/audioa/fetch", { ids })).status).toBe(200);
      expectEnvelopeError(
        await call(url, owner.key, "POST", "/audiob/fetch", { ids: [...ids, "task_x"] }),
        400,
        "more than 100",
      );
    });

    it("answers 400 in the envelope when ids is not a non-empty array of strings", async () => {
      const { url } = env.gw;
      const cases: [unknown, string][] = [
        [{ ids: "task_1" }, "body.ids must be array"],
        [{ ids: [1, 2] }, "body.ids[0] must be string"],
        [{ ids: [] }, "body.ids must NOT have fewer than 1 items"],
        [{}, "body.ids is required"],
        [{ ids: [null] }, "body.ids[0] must be string"],
        [{ ids: ["a"], extra: 1 }, "body.extra is not a known field"],
      ];
      for (const [body, message] of cases) {
        expectEnvelopeError(await call(url, owner.key, "POST", "/audioa/fetch", body), 400, message);
      }
      expectEnvelopeError(await call(url, owner.key, "POST", "/audioa/fetch", undefined, "{not json"), 400, "JSON");
    });

    it("answers 401 without a valid bearer token", async () => {
      const { url } = env.gw;
      expectEnvelopeError(await call(url, null, "POST", "/audioa/submit/MUSIC", { prompt: "x" }), 401);
      expectEnvelopeError(await call(url, "sk-wrong", "GET", `/audioa/fetch/${ownTaskIds[0]}`), 401);
      expectEnvelopeError(await call(url, null, "POST", "/audiob/fetch", { ids: ["x"] }), 401);
    });

    it("answers an unknown action with 400 and an unknown family with 404", async () => {
      const { url } = env.gw;
      expectEnvelopeError(await submit(url, owner.key, "audioa", "REMIX", { prompt: "x" }), 400, "Unknown action");
      expectEnvelopeError(await submit(url, owner.key, "audiob", "REPLACE", { prompt: "x" }), 400, "Unknown action");
      expectEnvelopeError(await submit(url, owner.key, "audioc", "MUSIC", { prompt: "x" }), 404);
    });

    it("answers bad submit bodies with 400 naming the field, without charging", async () => {
      const { url } = env.gw;
      const cases: [string, unknown, string][] = [
        ["audioa", { prompt: "x", make_instrumental: "yes" }, "make_instrumental"],
        ["audioa", { prompt: 5 }, "prompt"],
        [
          "audioa",
          { prompt: "x", continue_at: -1, continue_clip_id: "e9893d04-5b1a-4c3e-9f55-0d4e3f8b2a11" },
          "continue_at",
        ],
        ["audioa", { prompt: "x", continue_clip_id: "not-a-uuid", continue_at: 3 }, "continue_clip_id"],
        ["audioa", { prompt: "x", continue_at: 3 }, "continue_clip_id"],
        ["audioa", { title: "no prompt" }, "prompt"],
        ["audioa", { prompt: "x".repeat(5001) }, "prompt"],
        ["audiob", { prompt: "x", audio_weight: 1.5 }, "audio_weight"],
        ["audiob", { prompt: "x", style_weight: 0.123 }, "style_weight"],
        ["audiob", { prompt: "x", weirdness_constraint: -0.1 }, "weirdness_constraint"],
        ["audiob", { prompt: "x", custom_mode: true }, "style"],
        ["audiob", { prompt: "x".repeat(501) }, "prompt"],
        ["audiob", { style: "no prompt" }, "prompt"],
        ["audiob", [1, 2], "body"],
      ];
      const before = await env.gw.balance(owner.userId);
      for (const [family, body, field] of cases) {
        const res = await submit(url, owner.key, family, "MUSIC", body);
        expectEnvelopeError(res, 400, field);
      }
      for (const family of ["audioa", "audiob"]) {
        expectEnvelopeError(
          await call(url, owner.key, "POST", `/${family}/submit/MUSIC`, undefined, '{"prompt": '),
          400,
          "JSON",
        );
      }
      expect(await env.gw.balance(owner.userId)).toBe(before);
    });

    it("passes fields it does not know on to a task-relay upstream, and leaves them out for generate-record", async () => {
      const { gw, sim } = env;
      const relayed = await submit(gw.url, owner.key, "audioa", "MUSIC", {
        prompt: "x",
        persona_id: "p-42",
        extra: { nested: [1, 2] },
      });
      expect(relayed.status).toBe(200);
      const toRelay = await eventually(async () =>
        sim.received.find((r) => r.path === "/audioa/submit/MUSIC" && (r.body as any)?.persona_id === "p-42"),
      );
      expect(toRelay.body).toMatchObject({ prompt: "x", persona_id: "p-42", extra: { nested: [1, 2] } });

      const recorded = await submit(gw.url, owner.key, "audiob", "MUSIC", {
        prompt: "y",
        customMode: true,
        vocal: "f",
      });
      expect(recorded.status).toBe(200);
      const row = await sentRow(gw, recorded.body.data);
      const toRecord = sim.received.find(
        (r) => r.protocol === "generate-record" && r.body && (r.body as any).prompt === "y",
      );
      expect(row.upstream_id).toBeTruthy();
      expect(toRecord?.body).toMatchObject({ prompt: "y", customMode: false });
      expect(toRecord?.body).not.toHaveProperty("vocal");
    });
  });
}
