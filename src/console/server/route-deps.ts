import type { FastifyRequest } from "fastify";
import type { Config } from "../../config/load.js";
import type { AdminPorts } from "../../core/admin/ports.js";
import { GatewayError } from "../../core/errors.js";
import type { RedemptionPorts } from "../../core/redemptions/ports.js";
import type { Ledger } from "../../store/ledger.js";
import type { Tokens } from "../../store/tokens.js";
import type { UserImages } from "../../store/user-images.js";
import type { Users } from "../../store/users.js";
import type { ConsoleSession } from "./console-auth.js";
import type { ConsoleServices } from "./console-services.js";

/** What the console's API uses. */
export interface ConsoleRouteDeps {
  /** The operator's use cases, which a user's own tokens and webhook go through too. */
  admin: AdminPorts;
  users: Users;
  tokens: Tokens;
  ledger: Ledger;
  config: Pick<Config, "console" | "bodies" | "webhooks">;
  console: ConsoleServices;
  userImages: Pick<UserImages, "list">;
  /** A user's redemption of a code, with its failed-attempt limit. */
  redemptions: RedemptionPorts;
  /** Absolute base URL for the links the console hands out (invites). */
  publicBaseUrl(): string;
}

/** The setting that lets visitors create their own user account. */
export const SELF_SIGNUP_SETTING = "console_self_signup";

export async function selfSignupOn(deps: Pick<ConsoleRouteDeps, "console">): Promise<boolean> {
  return (await deps.console.settings.get<boolean>(SELF_SIGNUP_SETTING)) === true;
}

/** The request's session: 401 without one. */
export async function requireSession(deps: ConsoleRouteDeps, request: FastifyRequest): Promise<ConsoleSession> {
  const session = await deps.console.auth.sessionOf(request);
  if (!session) throw new GatewayError("GW_ERR_UNAUTHENTICATED", "Sign in first: no console session.");
  return session;
}

/** A user's session: 401 without a session, 403 for an operator's. */
export async function requireUser(deps: ConsoleRouteDeps, request: FastifyRequest): Promise<ConsoleSession> {
  const session = await requireSession(deps, request);
  if (session.role !== "user") {
    throw new GatewayError("GW_ERR_FORBIDDEN", "These pages are a user's own; operators use the admin API.");
  }
  return session;
}

/**
 * The signed-in user (as `requireUser`) and the page of their own rows a list asks for, newest
 * first: `limit` 50 unless given, at most 200; `after` the last id of the previous page.
 */
export async function ownPage(
  deps: ConsoleRouteDeps,
  request: FastifyRequest,
  query: { after?: string; limit?: string },
): Promise<{ userId: number; limit: number; after: number | undefined }> {
  const session = await requireUser(deps, request);
  return {
    userId: session.subjectId,
    limit: Math.min(200, Math.max(1, query.limit === undefined ? 50 : Number(query.limit))),
    after: query.after === undefined ? undefined : Number(query.after),
  };
}
