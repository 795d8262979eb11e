import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";

type Schema = { properties?: Record<string, Schema>; type?: string; readOnly?: boolean; writeOnly?: boolean };
type Response = { description: string; content?: Record<string, { schema: Schema }> };
type Operation = {
  tags?: string[];
  security?: Record<string, string[]>[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses?: Record<string, Response>;
};
type Document = {
  openapi: string;
  info: { title: string; version: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; in?: string; name?: string; scheme?: string }> };
};

/** The routes of the admin and ops surfaces, as OpenAPI writes them. */
const EXPECTED: [string, string][] = [
  ["get", "/healthz"],
  ["get", "/readyz"],
  ["get", "/metrics"],
  ["get", "/api/admin/users"],
  ["post", "/api/admin/users"],
  ["get", "/api/admin/users/{id}"],
  ["patch", "/api/admin/users/{id}"],
  ["post", "/api/admin/users/{id}/topup"],
  ["get", "/api/admin/users/{id}/ledger"],
  ["post", "/api/admin/users/{id}/tokens"],
  ["get", "/api/admin/users/{id}/tokens"],
  ["patch", "/api/admin/tokens/{id}"],
  ["delete", "/api/admin/tokens/{id}"],
  ["get", "/api/admin/channel-types"],
  ["get", "/api/admin/channels"],
  ["post", "/api/admin/channels"],
  ["get", "/api/admin/channels/{id}"],
  ["patch", "/api/admin/channels/{id}"],
  ["get", "/api/admin/prices"],
  ["put", "/api/admin/prices"],
  ["get", "/api/admin/group-ratios"],
  ["put", "/api/admin/group-ratios/{group}"],
  ["get", "/api/admin/tasks"],
  ["get", "/api/admin/webhooks"],
  ["delete", "/api/admin/users/{id}"],
  ["get", "/api/admin/tokens/{id}"],
  ["delete", "/api/admin/channels/{id}"],
  ["get", "/api/admin/prices/{kind}/{name}"],
  ["patch", "/api/admin/prices/{kind}/{name}"],
  ["delete", "/api/admin/prices/{kind}/{name}"],
  ["put", "/api/admin/users/{id}/webhook"],
  ["post", "/api/admin/users/{id}/webhook-secret"],
  ["post", "/api/admin/users/{id}/invite"],
  ["get", "/api/admin/console-settings"],
  ["put", "/api/admin/console-settings"],
  ["get", "/console/api/session"],
  ["post", "/console/api/login"],
  ["post", "/console/api/logout"],
  ["get", "/console/api/signup-settings"],
  ["post", "/console/api/signup"],
  ["get", "/console/api/invites/{token}"],
  ["post", "/console/api/invites/{token}/accept"],
  ["get", "/console/api/me"],
  ["get", "/console/api/me/spend"],
  ["get", "/console/api/me/ledger"],
  ["get", "/console/api/me/tokens"],
  ["post", "/console/api/me/tokens"],
  ["delete", "/console/api/me/tokens/{id}"],
  ["get", "/console/api/me/tasks"],
  ["get", "/console/api/me/tasks/{task_id}"],
  ["get", "/console/api/me/images"],
  ["get", "/console/api/me/webhook"],
  ["put", "/console/api/me/webhook"],
  ["post", "/console/api/me/webhook/rotate-secret"],
  ["post", "/console/api/me/playground-token"],
  ["post", "/audioa/submit/MUSIC"],
  ["post", "/audioa/submit/REPLACE"],
  ["post", "/audioa/submit/INSTRUMENTALS_SWAP"],
  ["get", "/audioa/fetch/{id}"],
  ["post", "/audioa/fetch"],
  ["post", "/audiob/submit/MUSIC"],
  ["get", "/audiob/fetch/{id}"],
  ["post", "/audiob/fetch"],
  ["post", "/v1/images/generations"],
  ["post", "/v1beta/models/{model}:generateContent"],
  ["post", "/v1beta/models/{model}:streamGenerateContent"],
  ["post", "/v1beta/models/{model}:countTokens"],
  ["get", "/v1beta/models"],
  ["get", "/v1beta/models/{model}"],
  ["post", "/v1/chat/completions"],
  ["post", "/v1/messages"],
  ["post", "/v1/messages/count_tokens"],
  ["get", "/v1/models"],
  ["get", "/v1/models/{model}"],
];

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`API documentation [${kind}]`, () => {
    let gw: TestGateway;
    let doc: Document;
    beforeAll(async () => {
      gw = await startTestGateway(kind);
      const res = await fetch(`${gw.url}/openapi.json`);
      expect(res.status).toBe(200);
      doc = (await res.json()) as Document;
    });
    afterAll(async () => {
      await gw?.close();
    });

    it("serves /openapi.json that validates as OpenAPI 3.1", async () => {
      const validator = new Validator();
      const result = await validator.validate(structuredClone(doc) as unknown as Record<string, unknown>);
      expect(result.errors ?? []).toEqual([]);
      expect(result.valid).toBe(true);
      expect(validator.version).toBe("3.1");
      expect(doc.openapi).toBe("3.1.0");
      expect(doc.info.title).toBe("media-gateway");
      expect(doc.servers.length).toBeGreaterThan(0);
    });

    it("lists every admin and ops route", () => {
      const listed = Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.keys(ops).map((method) => `${method} ${path}`),
      );
      for (const [method, path] of EXPECTED) expect(listed).toContain(`${method} ${path}`);
    });

    it("declares how each surface authenticates and tags its routes", () => {
      const schemes = doc.components.securitySchemes;
      expect(schemes.bearerToken).toMatchObject({ type: "http", scheme: "bearer" });
      expect(schemes.googApiKey).toMatchObject({ type: "apiKey", in: "header", name: "x-goog-api-key" });
      expect(schemes.apiKeyHeader).toMatchObject({ type: "apiKey", in: "header", name: "x-api-key" });
      expect(schemes.apiKeyQuery).toMatchObject({ type: "apiKey", in: "query", name: "key" });
      expect(schemes.adminKeyHeader).toMatchObject({ type: "apiKey", in: "header", name: "x-admin-key" });

      const createUser = doc.paths["/api/admin/users"]?.post;
      expect(createUser?.tags).toEqual(["admin"]);
      expect(createUser?.security).toEqual([{ adminBearer: [] }, { adminKeyHeader: [] }, { consoleSession: [] }]);
      expect(schemes.consoleSession).toMatchObject({ type: "apiKey", in: "cookie", name: "mg_session" });
      expect(doc.paths["/console/api/me/tokens"]?.post?.security).toEqual([{ consoleSession: [] }]);
      expect(createUser?.requestBody).toBeDefined();
      expect(doc.paths["/healthz"]?.get?.tags).toEqual(["ops"]);
      expect(doc.paths["/metrics"]?.get?.security).toEqual([{}, { metricsKey: [] }]);
    });

    it("shows the two content methods as the paths clients call, keyed like Google's API", () => {
      for (const method of ["generateContent", "streamGenerateContent"]) {
        const operation = doc.paths[`/v1beta/models/{model}:${method}`]?.post as
          | (Operation & { parameters?: { in: string; name: string }[] })
          | undefined;
        expect(operation?.tags).toEqual(["content"]);
        expect(operation?.security).toEqual([{ googApiKey: [] }, { apiKeyHeader: [] }, { apiKeyQuery: [] }]);
        expect(operation?.parameters).toContainEqual(expect.objectContaining({ in: "path", name: "model" }));
      }
      expect(Object.keys(doc.paths).filter((p) => p.includes("{target}"))).toEqual([]);
    });

    it("marks routes that take no credentials as public", () => {
      expect(doc.paths["/v1/images/files/{key}"]?.get?.security).toEqual([]);
      expect(doc.paths["/audiob/callback/{secret}"]?.post?.security).toEqual([]);
      expect(doc.paths["/console/api/login"]?.post?.security).toEqual([]);
      expect(doc.paths["/console/api/invites/{token}/accept"]?.post?.security).toEqual([]);
    });

    it("describes every route's success and error answers, errors in its surface's shape", () => {
      const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.entries(ops).map(([method, op]) => ({ route: `${method} ${path}`, op })),
      );
      expect(operations.length).toBeGreaterThanOrEqual(EXPECTED.length);
      for (const { route, op } of operations) {
        const responses = op.responses ?? {};
        const codes = Object.keys(responses);
        expect(JSON.stringify(responses), route).not.toContain("Default Response");
        expect(codes.filter((c) => c.startsWith("2")).length, `${route}: a success answer`).toBeGreaterThan(0);
        expect(codes.filter((c) => c.startsWith("4")).length, `${route}: an error answer`).toBeGreaterThan(0);
        for (const [code, response] of Object.entries(responses)) {
          expect(response.description, `${route} ${code}`).not.toBe("");
          // A 204 has no body by definition.
          if (code === "204") expect(response.content, `${route} 204: no body`).toBeUndefined();
          else expect(Object.keys(response.content ?? {}).length, `${route} ${code}: a body schema`).toBeGreaterThan(0);
        }
        const error = responses["4XX"]?.content?.["application/json"]?.schema;
        const tag = op.tags?.[0];
        if (
          tag === "images" ||
          // A video's stored files answer in the envelope, as every task platform's files.
          (tag === "videos" && !route.includes("/video/files/")) ||
          tag === "models" ||
          tag === "redemptions" ||
          tag === "embeddings" ||
          (tag === "chat" && !route.includes("/v1/messages"))
        ) {
          expect(Object.keys(error?.properties?.error?.properties ?? {}), route).toEqual([
            "message",
            "type",
            "param",
            "code",
          ]);
        } else if (tag === "chat") {
          expect(Object.keys(error?.properties ?? {}), route).toEqual(["type", "error"]);
          expect(Object.keys(error?.properties?.error?.properties ?? {}), route).toEqual(["type", "message"]);
        } else if (tag === "console") {
          expect(Object.keys(error?.properties?.error?.properties ?? {}), route).toEqual(["code", "message", "field"]);
        } else if (tag === "content") {
          expect(Object.keys(error?.properties?.error?.properties ?? {}), route).toEqual(["code", "message", "status"]);
        } else {
          expect(Object.keys(error?.properties ?? {}), route).toEqual(["code", "message", "data"]);
          expect(error?.properties?.data?.type, route).toBe("null");
        }
      }
    });

    it("describes the content answers as relayed: JSON for generateContent, events or an array for streams", () => {
      const one = doc.paths["/v1beta/models/{model}:generateContent"]?.post?.responses?.["200"]?.content ?? {};
      expect(Object.keys(one)).toEqual(["application/json"]);
      expect(one["application/json"]?.schema.properties).toHaveProperty("candidates");
      const stream = doc.paths["/v1beta/models/{model}:streamGenerateContent"]?.post?.responses?.["200"]?.content;
      expect(Object.keys(stream ?? {}).sort()).toEqual(["application/json", "text/event-stream"]);
      expect(stream?.["application/json"]?.schema.type).toBe("array");
      const count = doc.paths["/v1beta/models/{model}:countTokens"]?.post?.responses?.["200"]?.content ?? {};
      expect(Object.keys(count)).toEqual(["application/json"]);
      expect(count["application/json"]?.schema.properties).toHaveProperty("totalTokens");
    });

    it("describes the chat answers as written: one object, or a stream of events", () => {
      for (const [path, field] of [
        ["/v1/chat/completions", "choices"],
        ["/v1/messages", "content"],
      ] as const) {
        const answer = doc.paths[path]?.post?.responses?.["200"]?.content ?? {};
        expect(Object.keys(answer).sort(), path).toEqual(["application/json", "text/event-stream"]);
        expect(answer["application/json"]?.schema.properties, path).toHaveProperty(field);
      }
    });

    it("marks a channel's key write-only and the fields the gateway keeps read-only", () => {
      const patch = doc.paths["/api/admin/channels/{id}"]?.patch?.requestBody?.content["application/json"]?.schema;
      expect(patch?.properties?.key?.writeOnly).toBe(true);
      expect(patch?.properties?.id?.readOnly).toBe(true);
      expect(patch?.properties?.base_url).toBeDefined();
      const shown =
        doc.paths["/api/admin/channels/{id}"]?.get?.responses?.["200"]?.content?.["application/json"]?.schema.properties
          ?.data;
      expect(shown?.properties).not.toHaveProperty("key");
      expect(Object.keys(shown?.properties ?? {}).filter((k) => /[A-Z]/.test(k))).toEqual([]);
      expect(shown?.properties?.failure_count?.readOnly).toBe(true);
    });

    it("keeps the documentation's own routes out of the document", () => {
      const paths = Object.keys(doc.paths);
      expect(paths.filter((p) => p.startsWith("/docs") || p === "/openapi.json")).toEqual([]);
    });

    it("serves interactive docs at /docs", async () => {
      const res = await fetch(`${gw.url}/docs`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      expect(await res.text()).toContain("swagger-ui");
      const spec = await fetch(`${gw.url}/docs/json`);
      expect(spec.status).toBe(200);
      expect(((await spec.json()) as Document).openapi).toBe("3.1.0");
    });
  });
}
