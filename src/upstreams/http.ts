import { Agent, type Dispatcher, errors, request } from "undici";
import { classifyStatus, UpstreamError } from "../core/upstream-error.js";
import { withoutSecret } from "./secret-scrub.js";

/** Time allowed to open a connection when the channel sets no `connectTimeoutMs`. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

function keepAliveAgent(connectTimeoutMs: number): Agent {
  return new Agent({
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 120_000,
    connections: 512,
    connect: { timeout: connectTimeoutMs },
  });
}

/**
 * Keep-alive connection pools for upstream calls, one per connect timeout in use: channels that
 * set none (or the same one) share a pool. The connect timeout is a setting of the pool in undici,
 * so a channel's `connectTimeoutMs` picks its pool.
 */
const agents = new Map<number, Agent>([[DEFAULT_CONNECT_TIMEOUT_MS, keepAliveAgent(DEFAULT_CONNECT_TIMEOUT_MS)]]);

function agentFor(connectTimeoutMs: number | undefined): Agent {
  const timeout = connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  let agent = agents.get(timeout);
  if (!agent) {
    agent = keepAliveAgent(timeout);
    agents.set(timeout, agent);
  }
  return agent;
}

export interface UpstreamCall {
  method: "GET" | "POST";
  url: string;
  headers?: Record<string, string>;
  /** JSON-serialisable body. */
  json?: unknown;
  signal?: AbortSignal;
  /** Time allowed to open the connection (TCP, and TLS for https), ms; default 10 s. */
  connectTimeoutMs?: number;
  /** Time allowed until the answer's headers arrive (first byte), ms. */
  firstByteTimeoutMs?: number;
  /** Longest silence between two body chunks, ms. */
  bodyTimeoutMs?: number;
  /** Whole-call limit, ms (aborts the call). */
  timeoutMs?: number;
}

/** `https://host/path` without query or credentials: safe to put in an error or a log. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return "(invalid url)";
  }
}

/** Turns a network-level failure into a classified UpstreamError. */
export function networkError(err: unknown, url: string): UpstreamError {
  const where = safeUrl(url);
  if (err instanceof errors.HeadersTimeoutError || err instanceof errors.ConnectTimeoutError) {
    return new UpstreamError("retryable", `upstream timed out before answering (${where})`, { cause: err });
  }
  if (err instanceof errors.BodyTimeoutError) {
    return new UpstreamError("retryable", `upstream stalled while answering (${where})`, { cause: err });
  }
  if ((err as Error)?.name === "AbortError" || (err as Error)?.name === "TimeoutError") {
    return new UpstreamError("retryable", `upstream call timed out or was aborted (${where})`, { cause: err });
  }
  const code = (err as { code?: string })?.code ?? (err as { cause?: { code?: string } })?.cause?.code ?? "";
  return new UpstreamError("retryable", `upstream unreachable${code ? ` (${code})` : ""} (${where})`, { cause: err });
}

/** Sends one upstream request; network failures come back as classified UpstreamErrors. */
export async function callUpstream(call: UpstreamCall): Promise<Dispatcher.ResponseData> {
  // Serialised before the call: a body the gateway cannot serialise is its own failure (a plain
  // error, never an UpstreamError), so it neither fails over nor counts against the channel.
  const body = call.json === undefined ? undefined : JSON.stringify(call.json);
  const signals = [call.signal, call.timeoutMs ? AbortSignal.timeout(call.timeoutMs) : undefined].filter(
    (s): s is AbortSignal => s !== undefined,
  );
  try {
    return await request(call.url, {
      method: call.method,
      dispatcher: agentFor(call.connectTimeoutMs),
      headers: {
        ...(call.json === undefined ? {} : { "content-type": "application/json" }),
        ...call.headers,
      },
      body,
      signal: signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals),
      headersTimeout: call.firstByteTimeoutMs ?? 60_000,
      bodyTimeout: call.bodyTimeoutMs ?? 300_000,
    });
  } catch (err) {
    throw networkError(err, call.url);
  }
}

/**
 * Reads a JSON answer; a non-2xx status or a body that is not JSON becomes an UpstreamError.
 * `secret` (the channel key) is blanked from any upstream text put into the error.
 */
export async function readJson(
  res: Dispatcher.ResponseData,
  url: string,
  options: { maxBytes?: number; secret?: string } = {},
): Promise<unknown> {
  const maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
  let text: string;
  try {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        res.body.destroy();
        throw new UpstreamError("retryable", `upstream answer larger than ${maxBytes} bytes (${safeUrl(url)})`);
      }
      chunks.push(chunk as Buffer);
    }
    text = Buffer.concat(chunks).toString("utf8");
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    throw networkError(err, url);
  }
  let parsed: unknown;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    if (res.statusCode >= 200 && res.statusCode < 300) {
      throw new UpstreamError("retryable", `upstream answered malformed JSON (${safeUrl(url)})`, {
        status: res.statusCode,
      });
    }
    parsed = null;
  }
  if (res.statusCode < 200 || res.statusCode >= 300) {
    const message = upstreamMessage(parsed, options.secret) ?? `HTTP ${res.statusCode}`;
    throw new UpstreamError(classifyStatus(res.statusCode), `upstream error ${res.statusCode}: ${message}`, {
      status: res.statusCode,
    });
  }
  return parsed;
}

/** The human message inside common upstream error bodies, with the secret blanked. */
export function upstreamMessage(body: unknown, secret?: string): string | null {
  if (!body || typeof body !== "object") return null;
  const b = body as Record<string, any>;
  const m = b.error?.message ?? b.message ?? b.msg ?? null;
  return typeof m === "string" ? withoutSecret(m.slice(0, 4000), secret).slice(0, 500) : null;
}
