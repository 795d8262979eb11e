import type { Config } from "../../config.js";
import type { ConsoleServices } from "../../console/server/console-services.js";
import type { RateLimits } from "../../limits/rate-limits.js";
import type { OperatorLists } from "../../store/operator-lists.js";
import type { AdminStores } from "./admin-stores.js";

export type { OperatorLists };

/** What the admin API uses. */
export interface AdminDeps extends Omit<AdminStores, "allowPrivateWebhooks"> {
  config: Pick<Config, "bodies" | "webhooks" | "console">;
  /** The admin key's hash as it stands now (re-read from the store). */
  adminKeyHash(): Promise<string>;
  limits: Pick<RateLimits, "failAuthentication">;
  operatorLists: OperatorLists;
  /** Operators' console sessions (accepted instead of the admin key), invites and console settings. */
  console: ConsoleServices;
  /** Absolute base URL of the links the API hands out (invites). */
  publicBaseUrl(): string;
}
