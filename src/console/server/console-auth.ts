import { randomBytes, timingSafeEqual } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../../config/load.js";
import { GatewayError } from "../../core/errors.js";
import { sha256Hex, unixNow } from "../../core/ids.js";
import type { ConsoleAccounts } from "../../store/console-accounts.js";
import type { ConsoleSessions } from "../../store/console-sessions.js";
import type { Settings } from "../../store/settings.js";
import type { Users } from "../../store/users.js";
import { cookieValue, SESSION_COOKIE, sessionCookie, signValue, unsignValue } from "./cookies.js";

export type ConsoleRole = "operator" | "user";

/** A signed-in console browser, as a request sees it. */
export interface ConsoleSession {
  idHash: string;
  role: ConsoleRole;
  subjectId: number;
  csrfToken: string;
  name: string;
  email: string | null;
}

/** What the session answers carry (`GET /console/api/session`, the sign-in answers). */
export interface SessionAnswer {
  role: ConsoleRole;
  id: number;
  name: string;
  email: string | null;
  csrfToken: string;
}

export interface ConsoleAuthParts {
  config: Pick<Config, "console" | "publicBaseUrl">;
  sessions: ConsoleSessions;
  accounts: ConsoleAccounts;
  users: Pick<Users, "get">;
  settings: Settings;
  now?: () => number;
}

const SECRET_SETTING = "console_cookie_secret";
/** last_seen_at is written at most this often per session (seconds). */
const TOUCH_EVERY_SECONDS = 30;
const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export const answerOf = (s: ConsoleSession): SessionAnswer => ({
  role: s.role,
  id: s.subjectId,
  name: s.name,
  email: s.email,
  csrfToken: s.csrfToken,
});

/**
 * Console sessions: server-side rows behind a signed, HttpOnly, SameSite=Strict cookie holding a
 * random id (the row keeps only its SHA-256), with an idle and an absolute expiry and a CSRF token
 * that every state change made with the cookie must echo in `x-csrf-token`.
 */
export class ConsoleAuth {
  private secret: Promise<Buffer> | null = null;
  private readonly resolved = new WeakMap<FastifyRequest, Promise<ConsoleSession | null>>();
  private readonly now: () => number;

  constructor(private readonly parts: ConsoleAuthParts) {
    this.now = parts.now ?? unixNow;
  }

  /** CONSOLE_COOKIE_SECRET, else one generated once and kept in the store for every instance. */
  private cookieSecret(): Promise<Buffer> {
    this.secret ??= (async () => {
      const configured = this.parts.config.console.cookieSecret;
      if (configured) return Buffer.from(configured, "utf8");
      await this.parts.settings.setIfAbsent(SECRET_SETTING, randomBytes(32).toString("base64url"));
      return Buffer.from((await this.parts.settings.get<string>(SECRET_SETTING)) as string, "utf8");
    })();
    return this.secret;
  }

  /** Whether the cookie must be Secure: the request came over https, or the public URL is https. */
  private secure(request: FastifyRequest): boolean {
    return request.protocol === "https" || (this.parts.config.publicBaseUrl ?? "").startsWith("https://");
  }

  /** Starts a session for an account and sets its cookie. */
  async start(
    request: FastifyRequest,
    reply: FastifyReply,
    account: { role: ConsoleRole; id: number; name: string; email: string | null },
  ): Promise<ConsoleSession> {
    // A sign-in replaces the session the browser had: its row goes, whoever it was for.
    const previous = await this.sessionOf(request);
    if (previous) await this.parts.sessions.delete(previous.idHash);
    const id = randomBytes(32).toString("base64url");
    const now = this.now();
    const session: ConsoleSession = {
      idHash: sha256Hex(id),
      role: account.role,
      subjectId: account.id,
      csrfToken: randomBytes(24).toString("base64url"),
      name: account.name,
      email: account.email,
    };
    const { sessionMaxSeconds, sessionIdleSeconds } = this.parts.config.console;
    await this.parts.sessions.create({
      id_hash: session.idHash,
      role: session.role,
      subject_id: session.subjectId,
      csrf_token: session.csrfToken,
      created_at: now,
      last_seen_at: now,
      expires_at: now + sessionMaxSeconds,
    });
    void this.parts.sessions.deleteExpired(now, now - sessionIdleSeconds).catch(() => undefined);
    const signed = signValue(id, await this.cookieSecret());
    reply.header(
      "set-cookie",
      sessionCookie(signed, { secure: this.secure(request), maxAgeSeconds: sessionMaxSeconds }),
    );
    this.resolved.set(request, Promise.resolve(session));
    return session;
  }

  /** The request's live session, or null (no cookie, a bad signature, expired, account disabled). */
  sessionOf(request: FastifyRequest): Promise<ConsoleSession | null> {
    let found = this.resolved.get(request);
    if (!found) {
      found = this.load(request);
      this.resolved.set(request, found);
    }
    return found;
  }

  private async load(request: FastifyRequest): Promise<ConsoleSession | null> {
    const raw = cookieValue(request.headers.cookie, SESSION_COOKIE);
    if (!raw) return null;
    const id = unsignValue(raw, await this.cookieSecret());
    if (!id) return null;
    const idHash = sha256Hex(id);
    const row = await this.parts.sessions.get(idHash);
    if (!row) return null;
    const now = this.now();
    const idleSince = now - this.parts.config.console.sessionIdleSeconds;
    const account =
      Number(row.expires_at) > now && Number(row.last_seen_at) > idleSince ? await this.account(row) : null;
    if (!account) {
      await this.parts.sessions.delete(idHash);
      return null;
    }
    if (now - Number(row.last_seen_at) >= TOUCH_EVERY_SECONDS) await this.parts.sessions.touch(idHash, now);
    return {
      idHash,
      role: row.role as ConsoleRole,
      subjectId: Number(row.subject_id),
      csrfToken: row.csrf_token,
      ...account,
    };
  }

  /** The session's account while it is enabled, else null. */
  private async account(row: { role: string; subject_id: number }) {
    if (row.role === "operator") {
      const op = await this.parts.accounts.operator(Number(row.subject_id));
      return op && op.status === "enabled" ? { name: op.name, email: null } : null;
    }
    const user = await this.parts.users.get(Number(row.subject_id));
    return user && user.status === "enabled" ? { name: user.name, email: user.email ?? null } : null;
  }

  /** A state change made with a session must carry the session's CSRF token (403 otherwise). */
  assertCsrf(request: FastifyRequest, session: ConsoleSession): void {
    if (!STATE_CHANGING.has(request.method)) return;
    const header = request.headers["x-csrf-token"];
    const given = Buffer.from(typeof header === "string" ? header : "");
    const expected = Buffer.from(session.csrfToken);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new GatewayError("GW_ERR_CSRF");
    }
  }

  /** Ends the request's session (row deleted) and clears its cookie. */
  async end(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const session = await this.sessionOf(request);
    if (session) await this.parts.sessions.delete(session.idHash);
    reply.header("set-cookie", sessionCookie("", { secure: this.secure(request), maxAgeSeconds: 0 }));
    this.resolved.set(request, Promise.resolve(null));
  }
}
