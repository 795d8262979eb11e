import type { Config } from "../../config.js";
import type { RateLimits } from "../../limits/rate-limits.js";
import type { OperatorLists } from "../../store/operator-lists.js";
import type { AdminStores } from "./admin-stores.js";

export type { OperatorLists };

/** What the admin API uses. */
export interface AdminDeps extends Omit<AdminStores, "allowPrivateWebhooks"> {
  config: Pick<Config, "bodies" | "webhooks">;
  /** The admin key's hash as it stands now (re-read from the store). */
  adminKeyHash(): Promise<string>;
  limits: Pick<RateLimits, "failAuthentication">;
  operatorLists: OperatorLists;
}
