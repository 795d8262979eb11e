import type { FastifyRequest } from "fastify";
import type { AdminStores } from "../../admin/admin-stores.js";
import type { Config } from "../../config/load.js";
import type { RateLimits } from "../../limits/rate-limits.js";
import type { OperatorLists } from "../../store/operator-lists.js";

export type { OperatorLists };

/** What the admin API uses. */
export interface AdminDeps extends Omit<AdminStores, "allowPrivateWebhooks"> {
  config: Pick<Config, "bodies" | "webhooks" | "console">;
  /** The admin key's hash as it stands now (re-read from the store). */
  adminKeyHash(): Promise<string>;
  limits: Pick<RateLimits, "failAuthentication">;
  operatorLists: OperatorLists;
  /** Operators' console sessions, accepted instead of the admin key. */
  console: { auth: OperatorSessions };
  /** Absolute base URL of the links the API hands out (invites). */
  publicBaseUrl(): string;
}

/** A console session as the admin API checks it (the console's sign-in makes them). */
export interface OperatorSessions {
  sessionOf(request: FastifyRequest): Promise<{ role: string } | null>;
  assertCsrf(request: FastifyRequest, session: { role: string }): void;
}
