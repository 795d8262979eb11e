import fc from "fast-check";
import { REALISTIC_BODIES, text, valueFor } from "./fuzz-values.js";
import { answerProblem, surfaceOf } from "./surface-shapes.js";

/**
 * Random requests for every operation of the gateway's OpenAPI document: bodies shaped after the
 * operation's schema (with wrong types, unknown fields and plain junk mixed in), random query
 * strings, headers and path parameters, and now and then the wrong method or a broken body. Never
 * a URL outside loopback: image and webhook fields get no web address, so a fuzz run sends no
 * traffic anywhere but the gateway and its simulator.
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

const query = fc.oneof(
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
    arbitrary: fc.constantFrom("?alt=sse", "?alt=json", "?alt=xml", "?limit=-1", "?limit=abc", "?a=%ZZ&&=", "?key="),
  },
);

/** One random request for one of `operations`. */
export function requestFor(operations: Operation[], creds: Credentials): fc.Arbitrary<FuzzRequest> {
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
      { weight: 1, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
      { weight: 1, arbitrary: fc.constantFrom("{", "[]", "null", '{"a":', "\u0001", '{"__proto__": {"x": 1}}') },
    );
    const method = fc.oneof(
      { weight: 8, arbitrary: fc.constant(op.method) },
      { weight: 1, arbitrary: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS") },
    );
    const extra = fc.dictionary(fc.stringMatching(/^x-[a-z0-9-]{1,16}$/), headerValue, { maxKeys: 3 });
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
