import { hashPassword } from "../../src/auth/passwords.js";
import type { TestGateway } from "../support/gateway.js";

/** The scrypt cost of the console tests (the default, 15, is for real deployments). */
export const TEST_PASSWORD_COST = 4;
export const PASSWORD = "correct horse battery";

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

/**
 * A browser's side of the console over real HTTP: it keeps the session cookie it is given and
 * sends the CSRF token of the last session answer with state changes (unless told otherwise).
 */
export class ConsoleClient {
  cookie: string | null = null;
  csrf: string | null = null;

  constructor(
    readonly base: string,
    readonly address = "127.0.0.1",
  ) {}

  async call(
    method: string,
    path: string,
    body?: unknown,
    options: { csrf?: string | null; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    const csrf = options.csrf === undefined ? this.csrf : options.csrf;
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: {
        "x-forwarded-for": this.address,
        ...(this.cookie ? { cookie: this.cookie } : {}),
        ...(csrf && method !== "GET" ? { "x-csrf-token": csrf } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...options.headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const setCookie = res.headers.get("set-cookie");
    if (setCookie) {
      const value = setCookie.split(";")[0] ?? "";
      this.cookie = value.endsWith("=") ? null : value;
    }
    const text = await res.text();
    const parsed = text ? JSON.parse(text) : null;
    if (parsed && typeof parsed.csrfToken === "string") this.csrf = parsed.csrfToken;
    return { status: res.status, body: parsed, headers: res.headers };
  }

  login(login: string, password = PASSWORD): Promise<Answer> {
    return this.call("POST", "/console/api/login", { login, password });
  }
}

/** An operator account made straight on the gateway's store. */
export async function createOperator(gw: TestGateway, name: string, password = PASSWORD): Promise<number> {
  const row = await gw.gateway.ctx.console.accounts.createOperator(
    name,
    await hashPassword(password, TEST_PASSWORD_COST),
  );
  if (!row) throw new Error(`operator ${name} exists`);
  return Number(row.id);
}

/** A user with a console password (and an email), made through the admin API and the store. */
export async function createConsoleUser(
  gw: TestGateway,
  name: string,
  options: { email?: string; quota?: number } = {},
): Promise<number> {
  const res = await gw.admin("POST", "/users", { name, quota: options.quota ?? 1_000_000 });
  if (res.status !== 200) throw new Error(`create user: ${JSON.stringify(res.body)}`);
  const id = res.body.data.id as number;
  const accounts = gw.gateway.ctx.console.accounts;
  if (options.email) await accounts.setUserEmail(id, options.email);
  await accounts.setUserPassword(id, await hashPassword(PASSWORD, TEST_PASSWORD_COST));
  return id;
}
