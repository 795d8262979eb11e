import dns from "node:dns";
import net from "node:net";
import { Agent, type Dispatcher, request } from "undici";
import { deadline } from "../core/deadline-signal.js";
import { type AddressPolicy, addressAllowed } from "./address-policy.js";

/** Why a guarded fetch failed; callers turn it into their own error. */
export type GuardedFetchFailure = "blocked" | "scheme" | "redirects" | "too_large" | "timeout" | "network" | "busy";

/** A guarded fetch that did not get a usable answer. Its message never holds a query string. */
export class GuardedFetchError extends Error {
  override readonly name = "GuardedFetchError";
  constructor(
    readonly reason: GuardedFetchFailure,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
  }
}

export interface GuardedRequest {
  method?: "GET" | "POST" | "HEAD";
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Largest body read; a bigger answer fails with `too_large`. */
  maxBytes: number;
  /** Whole-call limit (every redirect and the body included), ms. */
  timeoutMs: number;
  /** Redirects followed, each checked again like the first URL (default 5; 0 = none). */
  maxRedirects?: number;
  signal?: AbortSignal;
  /** Told the size of each chunk of the body before it is kept; may throw to stop the download. */
  onBytes?: (bytes: number) => void;
}

export interface GuardedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** The URL that answered, after redirects. */
  url: string;
}

/** A guarded answer whose body is still to be read. */
export interface GuardedStream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: NodeJS.ReadableStream & AsyncIterable<Buffer>;
  /** The URL that answered, after redirects. */
  url: string;
  /** Turns an error met while reading the body into a GuardedFetchError (timeout, network...). */
  explain(err: unknown): GuardedFetchError;
}

/** `scheme://host/path` without credentials or query: safe to show. */
function shown(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

function findCause(err: unknown, depth = 0): GuardedFetchError | null {
  if (err instanceof GuardedFetchError) return err;
  if (!err || typeof err !== "object" || depth > 5) return null;
  return findCause((err as { cause?: unknown }).cause, depth + 1);
}

/**
 * Fetches URLs that come from outside (clients' image URLs, webhook targets) without letting
 * them reach internal addresses. Every host name is resolved and every resolved address checked
 * at connect time (so a name cannot be re-pointed between check and use); IP literals are checked
 * before connecting; each redirect goes through the same checks; the body is capped and the whole
 * call has a deadline.
 */
export class GuardedFetcher {
  private readonly agent: Agent;
  private readonly allowed: (address: string) => boolean;

  constructor(policy: AddressPolicy, options: { connectTimeoutMs?: number } = {}) {
    this.allowed = addressAllowed(policy);
    const allowed = this.allowed;
    const lookup: net.LookupFunction = (hostname, lookupOptions, callback) => {
      dns.lookup(hostname, { ...lookupOptions, all: true }, (err, addresses) => {
        if (err) return callback(err, "", 0);
        const refused = addresses.find((a) => !allowed(a.address));
        if (refused || addresses.length === 0) {
          const why = refused ? `resolves to ${refused.address}, which is not allowed` : "resolves to no address";
          return callback(new GuardedFetchError("blocked", `host ${hostname} ${why}`) as NodeJS.ErrnoException, "", 0);
        }
        if (lookupOptions.all) return (callback as any)(null, addresses);
        const first = addresses[0]!;
        callback(null, first.address, first.family);
      });
    };
    this.agent = new Agent({
      keepAliveTimeout: 10_000,
      connections: 64,
      connect: { timeout: options.connectTimeoutMs ?? 10_000, lookup },
    });
  }

  /** Throws `blocked` or `scheme` when the URL may not be fetched at all (before any network use). */
  checkUrl(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new GuardedFetchError("scheme", "not a valid URL");
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new GuardedFetchError("scheme", `scheme ${url.protocol} is not allowed; only http and https`);
    }
    const host = url.hostname.replace(/^\[|\]$/g, "");
    if (net.isIP(host) && !this.allowed(host)) {
      throw new GuardedFetchError("blocked", `address ${host} is not allowed (private, loopback or reserved)`);
    }
    return url;
  }

  /** Sends the request, following redirects under the same guard. */
  async fetch(raw: string, req: GuardedRequest): Promise<GuardedResponse> {
    const { res, url, deadline } = await this.open(raw, req);
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > req.maxBytes) {
          res.body.destroy();
          throw new GuardedFetchError("too_large", `answer is larger than the limit of ${req.maxBytes} bytes`);
        }
        if (req.onBytes) {
          try {
            req.onBytes((chunk as Buffer).length);
          } catch (err) {
            res.body.destroy();
            throw err;
          }
        }
        chunks.push(chunk as Buffer);
      }
    } catch (err) {
      throw this.failure(err, url, deadline);
    }
    return { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks), url: url.toString() };
  }

  /**
   * Like `fetch`, but answers as soon as the headers are in, with the body still to read: the
   * caller reads it (or destroys it) and counts its bytes against its own bound; only a declared
   * `content-length` over `maxBytes` is refused here. The deadline covers the body too.
   */
  async stream(raw: string, req: Omit<GuardedRequest, "onBytes">): Promise<GuardedStream> {
    const { res, url, deadline } = await this.open(raw, req);
    res.body.on("error", () => {});
    return {
      status: res.statusCode,
      headers: res.headers,
      body: res.body,
      url: url.toString(),
      explain: (err) => this.failure(err, url, deadline),
    };
  }

  /** Follows redirects to the answer that is not one; its body is still unread. */
  private async open(raw: string, req: Omit<GuardedRequest, "onBytes">) {
    // The deadline covers the redirects and the answer's body; its timer ends with the body.
    const limit = deadline(req.timeoutMs);
    try {
      const opened = await this.follow(raw, req, limit.signal);
      opened.res.body.once("close", limit.clear);
      return opened;
    } catch (err) {
      limit.clear();
      throw err;
    }
  }

  private async follow(raw: string, req: Omit<GuardedRequest, "onBytes">, deadline: AbortSignal) {
    const signal = req.signal ? AbortSignal.any([req.signal, deadline]) : deadline;
    const maxRedirects = req.maxRedirects ?? 5;
    let method = req.method ?? "GET";
    let body = req.body;
    let current = this.checkUrl(raw);
    for (let hop = 0; ; hop++) {
      let res: Dispatcher.ResponseData;
      try {
        res = await request(current, {
          method,
          headers: req.headers,
          body,
          dispatcher: this.agent,
          signal,
          headersTimeout: req.timeoutMs,
          bodyTimeout: req.timeoutMs,
        });
      } catch (err) {
        throw this.failure(err, current, deadline);
      }
      const location = res.headers.location;
      if (res.statusCode >= 300 && res.statusCode < 400 && typeof location === "string" && maxRedirects > 0) {
        res.body.resume();
        if (hop + 1 > maxRedirects) {
          throw new GuardedFetchError("redirects", `more than ${maxRedirects} redirects from ${shown(current)}`);
        }
        const next = new URL(location, current).toString();
        try {
          current = this.checkUrl(next);
        } catch (err) {
          const reason = (err as GuardedFetchError).message;
          throw new GuardedFetchError((err as GuardedFetchError).reason, `redirect refused: ${reason}`);
        }
        if (res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && method === "POST")) {
          method = "GET";
          body = undefined;
        }
        continue;
      }
      const declared = Number(res.headers["content-length"]);
      if (Number.isFinite(declared) && declared > req.maxBytes) {
        res.body.on("error", () => {});
        res.body.destroy();
        throw new GuardedFetchError("too_large", `answer is ${declared} bytes; the limit is ${req.maxBytes} bytes`);
      }
      return { res, url: current, deadline };
    }
  }

  private failure(err: unknown, url: URL, deadline: AbortSignal): GuardedFetchError {
    const guarded = findCause(err);
    if (guarded) return guarded;
    if (deadline.aborted) return new GuardedFetchError("timeout", `timed out fetching ${shown(url)}`, { cause: err });
    const code = (err as { code?: string })?.code ?? (err as { cause?: { code?: string } })?.cause?.code;
    return new GuardedFetchError("network", `could not fetch ${shown(url)}${code ? ` (${code})` : ""}`, {
      cause: err,
    });
  }

  /** Closes the connection pool. */
  close(): Promise<void> {
    return this.agent.close();
  }
}
