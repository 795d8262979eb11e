// Every call of the console: same-origin JSON with the session cookie; state changes carry the
// session's CSRF token. The admin API answers in its envelope ({code, message, data}), the
// console API plainly; both kinds of error become an ApiError naming the field when given.

import type { Static } from "@sinclair/typebox";
import type { SessionAnswerSchema } from "../../contracts/console.js";

export type Session = Static<typeof SessionAnswerSchema>;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

let csrfToken = "";
let onSignedOut: () => void = () => {};

export function setCsrfToken(token: string): void {
  csrfToken = token;
}

export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

function errorOf(status: number, body: unknown): ApiError {
  const b = body as { error?: { code?: string; message?: string; field?: string }; code?: string; message?: string };
  if (b?.error && typeof b.error === "object") {
    return new ApiError(status, b.error.code ?? "error", b.error.message ?? `HTTP ${status}`, b.error.field);
  }
  if (typeof b?.message === "string" && b.message !== "")
    return new ApiError(status, String(b.code ?? "error"), b.message);
  return new ApiError(status, "error", `The request failed (HTTP ${status}).`);
}

export async function request<T>(method: string, url: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET" && method !== "HEAD") headers["x-csrf-token"] = csrfToken;
  const res = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const text = await res.text();
  let parsed: unknown = null;
  if (text !== "") {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
  }
  if (!res.ok) {
    if (res.status === 401 && !url.endsWith("/login") && !url.endsWith("/session")) onSignedOut();
    throw errorOf(res.status, parsed);
  }
  const envelope = parsed as { code?: unknown; data?: unknown } | null;
  if (url.startsWith("/api/admin/") && envelope && envelope.code === "success") return envelope.data as T;
  return parsed as T;
}

/** A state change whose answer is text (a CSV export): the text, or the ApiError of its JSON error. */
export async function postForText(url: string): Promise<string> {
  const res = await fetch(url, {
    method: "POST",
    headers: { accept: "text/csv, application/json", "x-csrf-token": csrfToken },
    credentials: "same-origin",
  });
  const text = await res.text();
  if (!res.ok) {
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
    throw errorOf(res.status, parsed);
  }
  return text;
}

export const get = <T>(url: string) => request<T>("GET", url);
export const post = <T>(url: string, body?: unknown) => request<T>("POST", url, body ?? {});
export const put = <T>(url: string, body: unknown) => request<T>("PUT", url, body);
export const patch = <T>(url: string, body: unknown) => request<T>("PATCH", url, body);
export const del = <T>(url: string) => request<T>("DELETE", url);

/** A query string of the given values, leaving out empty ones. */
export function query(values: Record<string, string | number | undefined | null>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== null && v !== "") params.set(k, String(v));
  const s = params.toString();
  return s === "" ? "" : `?${s}`;
}
