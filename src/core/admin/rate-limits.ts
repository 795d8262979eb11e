import { GatewayError } from "../errors.js";
import { checkRule, type LimitScope, type RateLimitRule } from "../limits/rate-limit-rules.js";
import type { AdminPorts } from "./ports.js";

/** A limit's identity as an operator gives it (subject and group default to ""). */
export interface RateLimitKeyInput {
  scope: LimitScope;
  subject?: string;
  group?: string;
}

/** A limit to set: its identity and its limits (an omitted or null limit is none). */
export interface SetRateLimitInput extends RateLimitKeyInput {
  requestsPerMinute?: number | null;
  tokensPerMinute?: number | null;
}

export function listRateLimits(s: AdminPorts): Promise<RateLimitRule[]> {
  return s.rateLimits.list();
}

/** Sets a limit (replacing the one of the same identity); told to every instance's cache. */
export async function setRateLimit(s: AdminPorts, input: SetRateLimitInput): Promise<RateLimitRule> {
  const rule = checkRule({
    scope: input.scope,
    subject: input.subject ?? "",
    group: input.group ?? "",
    requestsPerMinute: input.requestsPerMinute ?? null,
    tokensPerMinute: input.tokensPerMinute ?? null,
  });
  await s.rateLimits.set(rule);
  await s.announce("limits");
  return rule;
}

/** Removes a limit; a 404 when there is none of that identity. */
export async function removeRateLimit(
  s: AdminPorts,
  key: RateLimitKeyInput,
): Promise<{ scope: LimitScope; subject: string; group: string; deleted: true }> {
  const subject = key.subject ?? "";
  const group = key.group ?? "";
  if (!(await s.rateLimits.remove(key.scope, subject, group))) {
    throw new GatewayError("GW_ERR_NOT_FOUND", `no ${key.scope} limit of subject "${subject}" and group "${group}"`);
  }
  await s.announce("limits");
  return { scope: key.scope, subject, group, deleted: true };
}
