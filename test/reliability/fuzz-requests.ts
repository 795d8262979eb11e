import fc from "fast-check";
import { REALISTIC_BODIES, text, valueFor } from "./fuzz-values.js";
import { answerProblem, surfaceOf } from "./surface-shapes.js";

/**
 * Random requests for every operation of the gateway's OpenAPI document: bodies shaped after the
 * operation's schema (with wrong types, unknown fields and plain junk mixed in), bodies nested up
 * to 100,000 deep, NUL characters and unpaired surrogates in every string field, field name and
 * path parameter, URLs of every form in every URL field, random query strings with percent-encoded
 * parameter names, headers and path parameters, and now and then the wrong method or a broken
 * body. Every URL is one the gateway must refuse without connecting (loopback, private, reserved,
 * malformed), so a fuzz run sends no traffic anywhere but the gateway and its simulator.
 */

export interface Operation {
  method: string;
  /** OpenAPI path template, e.g. `/audioa/fetch/{id}`. */
  path: string;
  bodySchema: any;
}

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
}

export interface Credentials {
  /** A valid token of a user with plenty of quota. */
  token: string;
  adminKey: string;
}

/** The operations of an OpenAPI document. */
export function operationsOf(doc: any): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      out.push({
        method: method.toUpperCase(),
        path,
        bodySchema: op?.requestBody?.content?.["application/json"]?.schema ?? null,
      });
    }
  }
  return out;
}

/** A path parameter: plausible values and hostile ones, percent-encoded or raw. */
function paramFor(name: string, admin: boolean): fc.Arbitrary<string> {
  // Admin ids stay clear of the rows the run itself depends on (its channels, users and tokens).
  const plausible =
    admin && name === "id"
      ? fc.integer({ min: 100_000, max: 2 ** 31 - 1 }).map(String)
      : fc.constantFrom(
          "1",
          "0",
          "-1",
          "gemini-2.5-flash",
          "gemini-2.5-flash",
          "image-model",
          "task_0123456789abcdefghijABCDEFGHIJ01",
          "default",
          "abcdefghijklmnop1234",
        );
  return fc.oneof(
    { weight: 3, arbitrary: plausible },
    { weight: 3, arbitrary: fc.string({ maxLength: 40 }).map(encodeURIComponent) },
    // Dot segments, encoded slashes, broken percent-encoding and parameters over the router's limit.
    {
      weight: 1,
      arbitrary: fc.constantFrom("..", "%2e%2e", "a%2Fb", "%25", "%ZZ", "%", "x".repeat(60), "x".repeat(600)),
    },
    // NUL, and the UTF-8 bytes of lone surrogates (not valid UTF-8), alone or inside plausible values.
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        "%00",
        "gemini-2.5-flash%00",
        "task_%00",
        "1%00",
        "%ED%A0%80",
        "image-model%ED%B0%80",
        "%F0%9F%98",
        "task_%C0%80",
      ),
    },
  );
}

const headerValue = fc.stringMatching(/^[\x20-\x7e]{0,40}$/);

/** Mostly the credential the path expects, sometimes another one, a broken one or none. */
function authHeaders(creds: Credentials, path: string): fc.Arbitrary<Record<string, string>> {
  const right: Record<string, string> = path.startsWith("/api/admin")
    ? { authorization: `Bearer ${creds.adminKey}` }
    : path.startsWith("/v1beta")
      ? { "x-goog-api-key": creds.token }
      : { authorization: `Bearer ${creds.token}` };
  const others: fc.Arbitrary<Record<string, string>>[] = [
    fc.constant({ authorization: `Bearer ${creds.token}` }),
    fc.constant({ "x-goog-api-key": creds.token }),
    fc.constant({ "x-admin-key": creds.adminKey }),
    fc.constant({}),
    headerValue.map((v) => ({ authorization: v })),
    headerValue.map((v) => ({ "x-goog-api-key": v, "x-api-key": v })),
  ];
  return fc.oneof({ weight: 12, arbitrary: fc.constant(right) }, { weight: 4, arbitrary: fc.oneof(...others) });
}

const contentType = fc.oneof(
  { weight: 12, arbitrary: fc.constant("application/json") },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "text/plain",
      "application/json; charset=utf-16",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/jsonx",
      "text/event-stream",
      "",
    ),
  },
  { weight: 1, arbitrary: headerValue },
);

/**
 * Query strings whose parameter names are percent-encoded, in any case or spelling, with the
 * credential or without: the gateway decodes names once, as its query parser does.
 */
function encodedNames(creds: Credentials): fc.Arbitrary<string> {
  const names = ["%6Bey", "k%65y", "%6b%65%79", "%4Bey", "KEY", "key%00", "%2Bkey", "%25%36Bey", "%61lt", "%61%6c%74"];
  const values = [creds.token, encodeURIComponent(creds.token), "", "sse", "%00", "%ED%A0%80"];
  return fc
    .array(fc.tuple(fc.constantFrom(...names), fc.constantFrom(...values)), { minLength: 1, maxLength: 3 })
    .map((pairs) => `?${pairs.map(([n, v]) => `${n}=${v}`).join("&")}`);
}

const plainQuery = fc.oneof(
  { weight: 4, arbitrary: fc.constant("") },
  {
    weight: 2,
    arbitrary: fc.dictionary(
      fc.oneof(fc.constantFrom("alt", "key", "limit", "after", "before", "status", "user_id"), text),
      text,
      { maxKeys: 4 },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "?alt=sse",
      "?alt=json",
      "?alt=xml",
      "?limit=-1",
      "?limit=abc",
      "?a=%ZZ&&=",
      "?key=",
      "?alt=%00",
      "?status=%ED%A0%80",
    ),
  },
);

/** JSON text of a value nested `depth` deep, in arrays, objects or both. */
function deepValue(depth: number, kind: "array" | "object" | "mixed"): string {
  const open = kind === "array" ? "[" : kind === "object" ? '{"a":' : '[{"a":';
  const close = kind === "array" ? "]" : kind === "object" ? "}" : "}]";
  const times = kind === "mixed" ? Math.ceil(depth / 2) : depth;
  return `${open.repeat(times)}1${close.repeat(times)}`;
}

/**
 * Where a deep value goes in a body the operation would otherwise accept: a field its schema
 * leaves free (`tools` of content), or one whose type it checks.
 */
const DEEP_FIELD: Record<string, [string, string]> = {
  "/v1beta/models/{model}:generateContent": ['{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":', "}"],
  "/v1beta/models/{model}:streamGenerateContent": [
    '{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":',
    "}]}]}",
  ],
  "/v1/images/generations": ['{"model":"image-model","prompt":"p","image":', "}"],
  "/audioa/submit/MUSIC": ['{"prompt":"p","tags":', "}"],
  "/audioa/fetch": ['{"ids":', "}"],
};

/** Nesting near every surface's limit (16 and 64 levels by default) and far beyond it. */
function deepBodies(path: string): fc.Arbitrary<string> {
  const [before, after] = DEEP_FIELD[path] ?? ['{"name":"n","value":', "}"];
  return fc
    .tuple(
      fc.constantFrom(14, 15, 16, 17, 62, 63, 64, 65, 1_000, 5_000, 20_000, 100_000),
      fc.constantFrom("array" as const, "object" as const, "mixed" as const),
    )
    .map(([depth, kind]) => `${before}${deepValue(depth, kind)}${after}`);
}

/**
 * Requests aimed past the first checks, so that what they carry reaches the deep end: the right
 * credential and a known model, with a body nested far too deep, or NUL and surrogates in the
 * model (path or body), mixed with plain successes whose request-log rows share a batch with them.
 */
function targetedRequest(creds: Credentials): fc.Arbitrary<FuzzRequest> {
  const google = { "x-goog-api-key": creds.token, "content-type": "application/json" };
  const bearer = { authorization: `Bearer ${creds.token}`, "content-type": "application/json" };
  const method = fc.constantFrom("generateContent", "streamGenerateContent?alt=sse");
  const unstorable = fc.constantFrom("%00", "%ED%A0%80", "x%00y");
  const content = '{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}';
  return fc.oneof(
    fc
      .tuple(method, deepBodies("/v1beta/models/{model}:generateContent"))
      .map(([m, body]) => ({ method: "POST", path: `/v1beta/models/gemini-2.5-flash:${m}`, headers: google, body })),
    fc.tuple(method, unstorable).map(([m, bad]) => ({
      method: "POST",
      path: `/v1beta/models/gemini-2.5-flash${bad}:${m}`,
      headers: google,
      body: content,
    })),
    fc.constantFrom("image-model\u0000", "image-model\ud800", "\udfff").map((model) => ({
      method: "POST",
      path: "/v1/images/generations",
      headers: bearer,
      body: `{"model":"${model}","prompt":"a boat"}`,
    })),
    method.map((m) => ({
      method: "POST",
      path: `/v1beta/models/gemini-2.5-flash:${m}`,
      headers: google,
      body: content,
    })),
  );
}

/** One random request for one of `operations`. */
export function requestFor(operations: Operation[], creds: Credentials): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(
    { weight: 6, arbitrary: randomRequestFor(operations, creds) },
    { weight: 1, arbitrary: targetedRequest(creds) },
  );
}

function randomRequestFor(operations: Operation[], creds: Credentials): fc.Arbitrary<FuzzRequest> {
  // The operator API has most operations; the client surfaces get most of the cases.
  const weighted = operations.map((op) => ({
    weight: op.path.startsWith("/api/admin") ? 1 : 4,
    arbitrary: fc.constant(op),
  }));
  return fc.oneof(...weighted).chain((op) => {
    const admin = op.path.startsWith("/api/admin");
    const names = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
    const params = fc.tuple(...names.map((n) => paramFor(n, admin)));
    const realistic = REALISTIC_BODIES[op.path];
    const body = fc.oneof(
      ...(realistic ? [{ weight: 6, arbitrary: realistic.map((v) => JSON.stringify(v)) }] : []),
      { weight: 6, arbitrary: valueFor(op.bodySchema).map((v) => JSON.stringify(v)) },
      { weight: 2, arbitrary: deepBodies(op.path) },
      { weight: 1, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
      { weight: 1, arbitrary: fc.constantFrom("{", "[]", "null", '{"a":', "\u0001", '{"__proto__": {"x": 1}}') },
    );
    const method = fc.oneof(
      { weight: 8, arbitrary: fc.constant(op.method) },
      { weight: 1, arbitrary: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS") },
    );
    const extra = fc.dictionary(fc.stringMatching(/^x-[a-z0-9-]{1,16}$/), headerValue, { maxKeys: 3 });
    const query = fc.oneof({ weight: 4, arbitrary: plainQuery }, { weight: 1, arbitrary: encodedNames(creds) });
    return fc
      .record({
        params,
        query,
        body,
        method,
        auth: authHeaders(creds, op.path),
        type: contentType,
        extra,
        requestId: fc.option(headerValue, { nil: undefined }),
      })
      .map(({ params, query: q, body: b, method: m, auth, type, extra: x, requestId }) => {
        let path = op.path;
        names.forEach((name, i) => {
          path = path.replace(`{${name}}`, params[i] as string);
        });
        const search =
          typeof q === "string"
            ? q
            : Object.keys(q).length === 0
              ? ""
              : `?${new URLSearchParams(q as Record<string, string>).toString()}`;
        const sendsBody = m !== "GET" && m !== "OPTIONS" && b !== undefined;
        return {
          method: m,
          path: `${path}${search}`,
          headers: {
            ...x,
            ...auth,
            ...(sendsBody ? { "content-type": type } : {}),
            ...(requestId === undefined ? {} : { "x-request-id": requestId }),
          },
          body: sendsBody && b !== undefined ? b : undefined,
        };
      });
  });
}

/**
 * What is wrong with the gateway's answer to a fuzz request, or null. With a healthy upstream
 * behind it, any 5xx is the gateway's own fault; every error must be in its surface's shape.
 */
export function fuzzViolation(
  req: FuzzRequest,
  answer: { status: number; contentType: string; body: unknown },
): string | null {
  const where = `${req.method} ${req.path.slice(0, 200)}`;
  if (answer.status >= 500) return `${where}: status ${answer.status}`;
  // HEAD answers have no body; ops routes (/docs, /metrics...) have shapes of their own.
  if (req.method === "HEAD" || surfaceOf(req.path) === "ops") return null;
  const problem = answerProblem(req.path, answer.status, answer.contentType, answer.body);
  if (problem) return `${where}: ${answer.status} ${problem}`;
  return null;
}
