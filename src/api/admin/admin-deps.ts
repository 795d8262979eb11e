import type { FastifyRequest } from "fastify";
import type { Config } from "../../config/load.js";
import { Envelope } from "../../contracts/common.js";
import type { AdminPorts } from "../../core/admin/ports.js";
import type { VendorRegistry } from "../../core/vendor-registry.js";
import type { RateLimits } from "../../limits/rate-limits.js";
import type { OperatorLists } from "../../store/operator-lists.js";

export type { OperatorLists };

/** What the admin API uses. */
export interface AdminDeps {
  /** The ports of the operator's use cases (core/admin/), built by the wiring. */
  admin: AdminPorts;
  /** The channel types: a channel's `type` is checked against them, a channel tested by its type's probe. */
  vendors: VendorRegistry;
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

/** The 200 answer of an admin route: `data` in the envelope. */
export const answers = <T extends Parameters<typeof Envelope>[0]>(data: T) => ({ 200: Envelope(data) });
