import http from "node:http";
import net from "node:net";
import { refusedPort } from "../support/refused-port.js";

/**
 * A misbehaving upstream on loopback. A channel's base URL chooses the fault:
 * `{url}/{phase}/{fault}`, where phase `all` applies the fault to every call and phase `poll`
 * answers task submits correctly (both task protocols) and applies the fault to polls only.
 * Connection faults need no HTTP server: `refusedUrl` is a port nobody listens on, `resetUrl` a
 * TCP server that resets every connection it accepts.
 */
export const HTTP_FAULTS = [
  "status-500",
  "status-503",
  "status-429",
  "status-401",
  "malformed-json",
  "stall-before-headers",
  "stall-mid-body",
  "truncated-body",
  "slow-body",
] as const;
export type HttpFault =
  | (typeof HTTP_FAULTS)[number]
  | "stream-stall"
  | "echo-key"
  | "echo-key-encoded"
  | "echo-key-fragments";
export type Fault = HttpFault | "connection-refused" | "connection-reset";
export const ALL_FAULTS: readonly Fault[] = ["connection-refused", "connection-reset", ...HTTP_FAULTS];

export interface FaultUpstream {
  /** Base URL of a channel suffering `fault` (in `phase`). */
  baseUrl(fault: Fault, phase?: "all" | "poll"): string;
  /** Calls that reached the HTTP faults, by fault. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

/** A Gemini answer chunk with usage, without `finishReason` (more would follow). */
const PARTIAL_CHUNK = JSON.stringify({
  candidates: [{ content: { role: "model", parts: [{ text: "partial answer " }] }, index: 0 }],
  usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 3, totalTokenCount: 7 },
  responseId: "fault-upstream",
});

function submitAnswer(path: string): string | null {
  if (/\/submit\/[A-Z_]+$/.test(path)) return JSON.stringify({ code: "success", message: "", data: "fault-task-1" });
  if (/\/api\/v1\/generate$/.test(path))
    return JSON.stringify({ code: 200, msg: "success", data: { taskId: "fault-task-2" } });
  return null;
}

function keyOf(req: http.IncomingMessage): string {
  const auth = req.headers.authorization ?? "";
  const google = req.headers["x-goog-api-key"] ?? "";
  const anthropic = req.headers["x-api-key"] ?? "";
  return `${auth} ${String(google)} ${String(anthropic)}`.trim();
}

/** The bare channel key a call carried (Bearer or Google header). */
function bareKeyOf(req: http.IncomingMessage): string {
  return keyOf(req).replace(/^Bearer\s+/i, "");
}

/** The copies of a key an upstream might echo: spaced, split, encoded in the common ways. */
export function encodedCopies(key: string): string[] {
  const bytes = Buffer.from(key, "utf8");
  return [
    [...key].join(" "),
    `${key.slice(0, 5)} ${key.slice(5, 11)}\n${key.slice(11)}`,
    bytes.toString("base64"),
    bytes.toString("base64url"),
    Buffer.from(`key=${key}`).toString("base64"),
    Buffer.from(`k=${key}`).toString("base64url"),
    [...bytes].map((b) => `%${b.toString(16).padStart(2, "0").toUpperCase()}`).join(""),
    bytes.toString("hex"),
    bytes.toString("hex").toUpperCase(),
    bytes.toString("hex").replace(/(.{8})/g, "$1 "),
  ];
}

/** Each character of `text` as a JSON escape (`\u0073`), written out as text. */
export const jsonEscaped = (text: string) =>
  [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");

/** Every byte of `text` percent-encoded. */
export const percentEncoded = (text: string) =>
  [...Buffer.from(text)].map((b) => `%${b.toString(16).padStart(2, "0").toUpperCase()}`).join("");

/**
 * Pieces of a key (of 42 characters or more) as upstreams quote them: masked in the middle with
 * its first 12 and last 6 characters shown, and runs of 8 of its characters alone, URL-encoded,
 * JSON-escaped (as text, and on the wire: see `echo-key-fragments`), in hex and in base64.
 */
export function keyFragments(key: string): string[] {
  const run = (from: number) => key.slice(from, from + 8);
  return [
    `${key.slice(0, 12)}${"*".repeat(16)}${key.slice(-6)}`,
    run(14),
    percentEncoded(run(20)),
    jsonEscaped(run(6)),
    Buffer.from(run(26)).toString("hex"),
    Buffer.from(`x${run(30)}`).toString("base64"),
    `@wire-escaped:${run(34)}@`,
  ];
}

function listen(server: net.Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port)),
  );
}

/** Starts the faulty upstream (an HTTP server, a resetting TCP server and a closed port). */
export async function startFaultUpstream(): Promise<FaultUpstream> {
  const hits = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = req.url ?? "/";
      const [, phase = "all", fault = "status-500"] = url.split("?")[0]?.split("/") ?? [];
      const path = url.split("?")[0] ?? "";
      const submit = submitAnswer(path);
      if (phase === "poll" && submit) {
        res.writeHead(200, { "content-type": "application/json" }).end(submit);
        return;
      }
      hits.set(fault, (hits.get(fault) ?? 0) + 1);
      const sse = url.includes("streamGenerateContent");
      const status = /^status-(\d{3})$/.exec(fault);
      if (status) {
        const code = Number(status[1]);
        res.writeHead(code, { "content-type": "application/json" }).end(
          JSON.stringify({
            error: { code, message: `simulated ${code}`, status: "FAULT" },
            code,
            msg: `simulated ${code}`,
            message: `simulated ${code}`,
          }),
        );
        return;
      }
      switch (fault) {
        case "echo-key":
          // A refusal that repeats the credentials it was sent, as some upstreams do.
          res.writeHead(400, { "content-type": "application/json" }).end(
            JSON.stringify({
              error: { code: 400, message: `bad request for key ${keyOf(req)}`, status: "INVALID_ARGUMENT" },
              code: 400,
              msg: `bad request for key ${keyOf(req)}`,
              message: `bad request for key ${keyOf(req)}`,
            }),
          );
          return;
        case "echo-key-encoded": {
          const message = `bad request; credentials seen: ${encodedCopies(bareKeyOf(req)).join(" | ")}`;
          res.writeHead(400, { "content-type": "application/json" }).end(
            JSON.stringify({
              error: { code: 400, message, status: "INVALID_ARGUMENT" },
              code: 400,
              msg: message,
              message,
            }),
          );
          return;
        }
        case "echo-key-fragments": {
          // The last fragment is JSON-escaped on the wire, so the parsed message holds it plain.
          const message = `Incorrect API key provided: ${keyFragments(bareKeyOf(req)).join(" | ")}`;
          const body = JSON.stringify({
            error: { code: 400, message, status: "INVALID_ARGUMENT", type: "invalid_request_error" },
            type: "error",
            code: 400,
            msg: message,
            message,
          }).replace(/@wire-escaped:([^@]*)@/g, (_m, run: string) => jsonEscaped(run));
          res.writeHead(400, { "content-type": "application/json" }).end(body);
          return;
        }
        case "malformed-json":
          if (sse) res.writeHead(200, { "content-type": "text/event-stream" }).end('data: {"candidates": [\r\n\r\n');
          else res.writeHead(200, { "content-type": "application/json" }).end('{"code": "success", "data": [');
          return;
        case "stall-before-headers":
          // Never answers; the channel's first-byte timeout must end the call.
          return;
        case "stall-mid-body":
          res.writeHead(200, { "content-type": sse ? "text/event-stream" : "application/json" });
          res.write(sse ? 'data: {"candidates": [{"content"' : '{"code": "success", "da');
          return;
        case "truncated-body":
          res.writeHead(200, {
            "content-type": sse ? "text/event-stream" : "application/json",
            "content-length": "400",
          });
          res.write(sse ? 'data: {"candidates": [{"content"' : '{"code": "success", "da', () => res.destroy());
          return;
        case "slow-body": {
          // One byte every 100 ms: the channel's whole-call timeout must end it.
          res.writeHead(200, { "content-type": sse ? "text/event-stream" : "application/json" });
          const text = `${sse ? "data: " : ""}${JSON.stringify({ code: "success", data: "x".repeat(400) })}`;
          let i = 0;
          const timer = setInterval(() => {
            if (res.destroyed || i >= text.length) {
              clearInterval(timer);
              timers.delete(timer);
              if (!res.destroyed) res.end();
              return;
            }
            res.write(text[i]);
            i += 1;
          }, 100);
          timers.add(timer);
          return;
        }
        case "stream-stall":
          // One complete event, then silence: a failure after the first byte reached the client.
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write(`data: ${PARTIAL_CHUNK}\r\n\r\n`);
          return;
        default:
          res.writeHead(500, { "content-type": "application/json" }).end('{"error": "unknown fault"}');
      }
    });
  });
  const httpPort = await listen(server);

  const resetter = net.createServer((socket) => {
    socket.on("error", () => {});
    socket.once("data", () => socket.resetAndDestroy());
  });
  const resetPort = await listen(resetter);

  // A port nothing listens on: connections are refused.
  const closedPort = await refusedPort();

  return {
    hits,
    baseUrl(fault, phase = "all") {
      if (fault === "connection-refused") return `http://127.0.0.1:${closedPort}`;
      if (fault === "connection-reset") return `http://127.0.0.1:${resetPort}`;
      return `http://127.0.0.1:${httpPort}/${phase}/${fault}`;
    },
    async close() {
      for (const t of timers) clearInterval(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => resetter.close(() => resolve()));
    },
  };
}
