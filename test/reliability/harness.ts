import { request } from "undici";
import type { TestGateway } from "../support/gateway.js";
import { checkLedger, type LedgerFigures } from "./ledger-checks.js";
import { parseJsonBody } from "./surface-shapes.js";

export interface Answer {
  status: number;
  contentType: string;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Parsed JSON when the answer is JSON, else undefined. */
  body: any;
}

export interface CallOptions {
  headers?: Record<string, string>;
  /** A value to send as JSON, or a string sent as it is. */
  body?: unknown;
}

/** One HTTP call to the gateway, read to the end; never throws for an HTTP status. */
export async function callGateway(
  base: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Answer> {
  const raw = typeof options.body === "string" || options.body === undefined;
  const res = await request(`${base}${path}`, {
    method: method as "GET",
    headers: {
      ...(options.body !== undefined && !raw ? { "content-type": "application/json" } : {}),
      ...options.headers,
    },
    body: options.body === undefined ? undefined : raw ? (options.body as string) : JSON.stringify(options.body),
  });
  const text = await res.body.text();
  const contentType = String(res.headers["content-type"] ?? "");
  return {
    status: res.statusCode,
    contentType,
    headers: res.headers,
    text,
    body: parseJsonBody(contentType, text),
  };
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
export const googleKey = (key: string) => ({ "x-goog-api-key": key });

/** Polls `check` until it returns a value other than undefined, for at most `timeoutMs`. */
export async function waitFor<T>(check: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`gave up waiting for ${what} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The money rules over the whole store of a test gateway. */
export async function ledgerFigures(gw: TestGateway, options: { requireTerminal?: boolean } = {}) {
  const db = gw.gateway.ctx.store.db;
  const [users, ledger, tasks] = await Promise.all([
    db.selectFrom("users").select(["id", "quota"]).execute(),
    db.selectFrom("ledger").select(["user_id", "kind", "amount", "reference"]).execute(),
    db.selectFrom("tasks").select(["task_id", "user_id", "status", "quota"]).execute(),
  ]);
  return checkLedger(users, ledger, tasks, options) satisfies LedgerFigures;
}

/** A user's ledger rows other than top-ups. */
export async function spendingRows(gw: TestGateway, userId: number) {
  return gw.gateway.ctx.store.db
    .selectFrom("ledger")
    .select(["kind", "amount", "reference"])
    .where("user_id", "=", userId)
    .where("kind", "!=", "topup")
    .orderBy("id")
    .execute();
}

/** The gateway still answers its liveness probe. */
export async function isAlive(gw: TestGateway): Promise<boolean> {
  const res = await callGateway(gw.url, "GET", "/healthz");
  return res.status === 200 && res.body?.status === "ok";
}

export const CONTENT_BODY = {
  contents: [{ role: "user", parts: [{ text: "Say something short." }] }],
  generationConfig: { maxOutputTokens: 64 },
};
