import { readFileSync } from "node:fs";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { type AuthKind, routeAreaOf } from "../route-table.js";

type Security = Record<string, string[]>[];

/** The product version, from package.json (two folders above this one in src/ and in dist/). */
function productVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8"));
    return typeof pkg.version === "string" ? pkg.version : "0.0.0";
  } catch {
    return "0.0.0";
  }
}

/** How the document shows each way of authenticating of the route table. */
const SECURITY: Record<AuthKind, Security> = {
  bearer: [{ bearerToken: [] }],
  google: [{ googApiKey: [] }, { apiKeyHeader: [] }, { apiKeyQuery: [] }],
  anthropic: [{ apiKeyHeader: [] }, { bearerToken: [] }],
  "admin-key": [{ adminBearer: [] }, { adminKeyHeader: [] }, { consoleSession: [] }],
  session: [{ consoleSession: [] }],
  none: [],
};

const TAGS = [
  { name: "tasks", description: "Asynchronous audio tasks of the families `audioa` and `audiob`: submit, then fetch." },
  {
    name: "videos",
    description: "The OpenAI Videos API: asynchronous video tasks (create, remix, poll, list, download, delete).",
  },
  { name: "images", description: "Synchronous image generation, OpenAI-Images compatible." },
  { name: "content", description: "Gemini-native content generation, synchronous and streaming (SSE)." },
  {
    name: "chat",
    description: "Chat completions in OpenAI's and Anthropic's shapes, over every chat upstream (see docs/chat.md).",
  },
  {
    name: "embeddings",
    description: "Embeddings in OpenAI's shape, over OpenAI-compatible and Gemini upstreams (see docs/embeddings.md).",
  },
  { name: "models", description: "The models a token may use, in OpenAI's list shape." },
  { name: "redemptions", description: "A user redeems a redemption code with an API token." },
  { name: "admin", description: "Operator API: users, tokens, channels, prices, group ratios, tasks." },
  {
    name: "console",
    description:
      "The console's own API: sign-in, sessions and a user's own data (docs/console-security.md). " +
      "State changes need the session's `x-csrf-token` header.",
  },
  { name: "ops", description: "Health, readiness and metrics." },
];

/**
 * Gives a route its surface's tag and security unless its schema names its own, so every route
 * registered later lands under the right heading without repeating it in each schema.
 */
function tagBySurface({ schema, url, route }: { schema: unknown; url: string; route?: { constraints?: unknown } }) {
  const own = (schema ?? {}) as Record<string, unknown>;
  const area = routeAreaOf(url);
  // A route of the content path picked by its method (the embedding methods) is shown at its own path.
  const method = (route?.constraints as { geminiMethod?: unknown } | undefined)?.geminiMethod;
  const shown = typeof method === "string" ? `${url}:${method}` : url;
  if (!area) return { schema: own, url: shown };
  return {
    schema: { ...own, tags: own.tags ?? [area.surface], security: own.security ?? SECURITY[area.auth] },
    url: shown,
  };
}

type Paths = Record<string, Record<string, Record<string, unknown>>>;

const CONTENT_METHODS = [
  ["generateContent", "Generate content"],
  ["streamGenerateContent", "Generate content as a stream (server-sent events with alt=sse, else one JSON array)"],
  ["countTokens", "Count the tokens of a prompt (free; the upstream's count, else the gateway's estimate)"],
] as const;

/**
 * The shared route's JSON answer is a union of every method's (see `ContentAnswer`): each method
 * is shown its own. generateContent and countTokens answer one JSON object, never events.
 */
const METHOD_ANSWER = { generateContent: 0, streamGenerateContent: 1, countTokens: 2 } as const;

function ownAnswer(operation: Record<string, unknown>, method: keyof typeof METHOD_ANSWER): void {
  const ok = (
    operation.responses as Record<string, { content?: Record<string, { schema?: { anyOf?: unknown[] } }> }>
  )?.["200"];
  const json = ok?.content?.["application/json"];
  if (!ok?.content || !json) return;
  const schema = json.schema?.anyOf?.[METHOD_ANSWER[method]] ?? json.schema;
  ok.content =
    method === "streamGenerateContent"
      ? { ...ok.content, "application/json": { schema } }
      : { "application/json": { schema } };
}

/** An operation whose `{target}` path parameter is shown as `{model}`. */
function withModelParameter(operation: Record<string, unknown>): Record<string, unknown> {
  const parameters = (operation.parameters ?? []) as Record<string, unknown>[];
  operation.parameters = parameters.map((p) =>
    p.in === "path" && p.name === "target"
      ? { ...p, name: "model", schema: { type: "string", examples: ["gemini-2.5-flash"] } }
      : p,
  );
  return operation;
}

/**
 * The content surface serves both methods from one route whose path parameter is
 * `<model>:<method>`; the document shows them as the two paths clients call.
 */
function splitContentMethods(document: Record<string, unknown>): Record<string, unknown> {
  const paths = document.paths as Paths | undefined;
  const shared = paths?.["/v1beta/models/{target}"]?.post;
  if (!paths || !shared) return document;
  const split: Paths = {};
  for (const [path, item] of Object.entries(paths)) {
    if (path.startsWith("/v1beta/models/{target}:")) {
      // A method with a route of its own (the embedding methods).
      const verbs = Object.entries(item).map(([verb, op]) => [verb, withModelParameter(structuredClone(op))]);
      split[path.replace("{target}", "{model}")] = Object.fromEntries(verbs);
      continue;
    }
    if (path !== "/v1beta/models/{target}") {
      split[path] = item;
      continue;
    }
    // Other methods of the path (GET: one model) keep the plain path, with the parameter renamed.
    const { post: _post, ...others } = item;
    if (Object.keys(others).length > 0) {
      split["/v1beta/models/{model}"] = Object.fromEntries(
        Object.entries(others).map(([verb, op]) => [verb, withModelParameter(structuredClone(op))]),
      );
    }
    for (const [method, summary] of CONTENT_METHODS) {
      const operation = withModelParameter(structuredClone(shared));
      operation.summary ??= summary;
      ownAnswer(operation, method);
      split[`/v1beta/models/{model}:${method}`] = { post: operation };
    }
  }
  return { ...document, paths: split };
}

/**
 * OpenAPI 3.1 at /openapi.json, generated from the route schemas, and interactive docs at /docs.
 * Registered on the root instance before any surface, so it sees every route added after it.
 */
export async function registerApiDocs(app: FastifyInstance, publicBase: string | null): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "media-gateway",
        version: productVersion(),
        description:
          "A gateway for AI media and content generation: audio tasks, images and Gemini-native content, billed from an exact quota ledger.",
      },
      servers: [
        publicBase
          ? { url: publicBase.replace(/\/+$/, ""), description: "This gateway" }
          : { url: "/", description: "This gateway" },
      ],
      tags: TAGS,
      components: {
        securitySchemes: {
          bearerToken: {
            type: "http",
            scheme: "bearer",
            description: "A service token (`sk-...`) issued by the operator. Task and image endpoints.",
          },
          googApiKey: {
            type: "apiKey",
            in: "header",
            name: "x-goog-api-key",
            description: "The service token, as Google's SDK sends it. Content endpoints.",
          },
          apiKeyHeader: {
            type: "apiKey",
            in: "header",
            name: "x-api-key",
            description: "The service token. Content endpoints.",
          },
          apiKeyQuery: {
            type: "apiKey",
            in: "query",
            name: "key",
            description: "The service token in the query. Content endpoints.",
          },
          adminBearer: { type: "http", scheme: "bearer", description: "The admin key. Admin API." },
          adminKeyHeader: {
            type: "apiKey",
            in: "header",
            name: "x-admin-key",
            description: "The admin key. Admin API.",
          },
          consoleSession: {
            type: "apiKey",
            in: "cookie",
            name: "mg_session",
            description:
              "A console session (operators on the admin API, users on /console/api/me); state changes also need the `x-csrf-token` header.",
          },
          metricsKey: {
            type: "http",
            scheme: "bearer",
            description: "METRICS_KEY, required by /metrics only when it is set.",
          },
        },
      },
    },
    // A public base URL with a path must not be cut off the front of the route paths.
    stripBasePath: false,
    transform: tagBySurface,
    transformObject: (document) =>
      "openapiObject" in document ? splitContentMethods(document.openapiObject as Record<string, unknown>) : {},
  });
  await app.register(swaggerUi, {
    routePrefix: "/docs",
    logLevel: "warn",
    uiConfig: { docExpansion: "list", deepLinking: true },
  });
  app.get("/openapi.json", { schema: { hide: true }, logLevel: "warn" }, async () => app.swagger());
}
