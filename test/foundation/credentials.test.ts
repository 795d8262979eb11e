import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unixNow } from "../../src/core/ids.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";

type Carrier = "bearer" | "x-goog-api-key" | "x-api-key" | "query";

/** One request per surface that reaches past authentication and then fails in a known way. */
const SURFACES = {
  tasks: {
    carriers: ["bearer"] as Carrier[],
    path: "/audioa/fetch/task_doesnotexist",
    method: "GET",
    body: undefined,
    authedStatus: 404,
    shape: (b: any) => typeof b.code === "string" && typeof b.message === "string" && b.data === null,
    code: (b: any) => b.code as string,
  },
  images: {
    carriers: ["bearer"] as Carrier[],
    path: "/v1/images/generations",
    method: "POST",
    body: { model: "no-such-image-model", prompt: "x" },
    authedStatus: 400,
    shape: (b: any) => typeof b.error?.message === "string" && typeof b.error?.type === "string" && "param" in b.error,
    code: (b: any) => b.error.code as string,
  },
  content: {
    carriers: ["x-goog-api-key", "x-api-key", "query"] as Carrier[],
    path: "/v1beta/models/no-such-model:generateContent",
    method: "POST",
    body: { contents: [{ role: "user", parts: [{ text: "hi" }] }] },
    authedStatus: 404,
    shape: (b: any) => typeof b.error?.code === "number" && typeof b.error?.status === "string",
    code: (b: any) => b.error.status as string,
  },
} as const;

const ALL_CARRIERS: Carrier[] = ["bearer", "x-goog-api-key", "x-api-key", "query"];

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`credentials on every surface [${kind}]`, () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startTestGateway(kind);
    });
    afterAll(async () => {
      await gw?.close();
    });

    const send = async (surface: keyof typeof SURFACES, carrier: Carrier | null, key: string) => {
      const s = SURFACES[surface];
      const headers: Record<string, string> = s.body ? { "content-type": "application/json" } : {};
      let url = `${gw.url}${s.path}`;
      if (carrier === "bearer") headers.authorization = `Bearer ${key}`;
      if (carrier === "x-goog-api-key" || carrier === "x-api-key") headers[carrier] = key;
      if (carrier === "query") url += `?key=${encodeURIComponent(key)}`;
      const res = await fetch(url, { method: s.method, headers, body: s.body ? JSON.stringify(s.body) : undefined });
      return { status: res.status, body: await res.json() };
    };

    it("accepts each surface's credential carriers and refuses the others with 401 in its shape", async () => {
      const { key } = await gw.createUser();
      for (const surface of Object.keys(SURFACES) as (keyof typeof SURFACES)[]) {
        const s = SURFACES[surface];
        for (const carrier of ALL_CARRIERS) {
          const res = await send(surface, carrier, key);
          const label = `${surface} via ${carrier}: ${JSON.stringify(res.body)}`;
          expect(res.status, label).toBe((s.carriers as readonly Carrier[]).includes(carrier) ? s.authedStatus : 401);
          expect(s.shape(res.body), label).toBe(true);
        }
        const none = await send(surface, null, key);
        expect(none.status).toBe(401);
        expect(s.shape(none.body)).toBe(true);
        const wrong = await send(surface, s.carriers[0] as Carrier, "sk-not-a-real-key");
        expect(wrong.status).toBe(401);
      }
    });

    it("refuses expired, disabled, revoked, foreign-IP tokens and disabled users with the right status", async () => {
      const expired = await gw.createUser({ token: { expiresAt: unixNow() - 10 } });
      const disabled = await gw.createUser();
      await gw.admin("PATCH", `/tokens/${disabled.tokenId}`, { status: "disabled" });
      const revoked = await gw.createUser();
      await gw.admin("DELETE", `/tokens/${revoked.tokenId}`);
      const foreignIp = await gw.createUser({ token: { ipAllow: ["10.0.0.0/8", "2001:db8::/32"] } });
      const localIp = await gw.createUser({ token: { ipAllow: ["127.0.0.0/8"] } });
      const userOff = await gw.createUser();
      await gw.admin("PATCH", `/users/${userOff.userId}`, { status: "disabled" });

      const expectations: [string, string, number, { tasks: string; images: string; content: string }][] = [
        ["expired", expired.key, 401, { tasks: "token_expired", images: "token_expired", content: "UNAUTHENTICATED" }],
        [
          "disabled",
          disabled.key,
          401,
          { tasks: "token_disabled", images: "token_disabled", content: "UNAUTHENTICATED" },
        ],
        [
          "revoked",
          revoked.key,
          401,
          { tasks: "token_disabled", images: "token_disabled", content: "UNAUTHENTICATED" },
        ],
        [
          "foreign ip",
          foreignIp.key,
          403,
          { tasks: "ip_not_allowed", images: "ip_not_allowed", content: "PERMISSION_DENIED" },
        ],
        [
          "user off",
          userOff.key,
          403,
          { tasks: "user_disabled", images: "user_disabled", content: "PERMISSION_DENIED" },
        ],
      ];
      for (const [label, key, status, codes] of expectations) {
        for (const surface of Object.keys(SURFACES) as (keyof typeof SURFACES)[]) {
          const s = SURFACES[surface];
          const res = await send(surface, s.carriers[0] as Carrier, key);
          expect(res.status, `${label} on ${surface}`).toBe(status);
          expect(s.shape(res.body)).toBe(true);
          expect(s.code(res.body)).toBe(codes[surface]);
        }
      }
      for (const surface of Object.keys(SURFACES) as (keyof typeof SURFACES)[]) {
        const s = SURFACES[surface];
        expect((await send(surface, s.carriers[0] as Carrier, localIp.key)).status).toBe(s.authedStatus);
      }
    });

    it("stops a token within the same instance as soon as it is revoked", async () => {
      const { key, tokenId } = await gw.createUser();
      expect((await send("tasks", "bearer", key)).status).toBe(404);
      await gw.admin("DELETE", `/tokens/${tokenId}`);
      expect((await send("tasks", "bearer", key)).status).toBe(401);
    });

    it("never writes a presented key into a log line", async () => {
      const { key } = await gw.createUser();
      await send("content", "query", key);
      await send("content", "x-goog-api-key", key);
      await send("tasks", "bearer", key);
      await send("tasks", "bearer", "sk-guessedkeyguessedkeyguessedkey");
      const logs = gw.logs.join("\n");
      expect(logs.length).toBeGreaterThan(0);
      expect(logs).not.toContain(key);
      expect(logs).not.toContain("sk-guessedkey");
      expect(logs).not.toContain(gw.adminKey);
    });
  });
}
