import { GatewayError } from "../errors.js";

/** What a rate limit is of: a token, a user, or a model (counted per user). */
export const LIMIT_SCOPES = ["token", "user", "model"] as const;
export type LimitScope = (typeof LIMIT_SCOPES)[number];

/**
 * An operator's rate limit. `subject` is the token's id, the user's id or the model's name; `group`
 * is "" for a limit of the subject itself. A group's default of its tokens or users has the
 * subject "" and the group's name; a model's limit for one group has both. A null limit is none.
 */
export interface RateLimitRule {
  scope: LimitScope;
  subject: string;
  group: string;
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
}

/** One limit a call is counted against: the counter's key, its limits, and how a refusal says it. */
export interface AppliedLimit {
  key: string;
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  /** "this token", "this user", `model "x" for this user`. */
  of: string;
}

/** The rules, found by their identity. */
export class RuleIndex {
  private readonly rules = new Map<string, RateLimitRule>();

  constructor(rules: readonly RateLimitRule[]) {
    for (const rule of rules) this.rules.set(RuleIndex.id(rule.scope, rule.subject, rule.group), rule);
  }

  private static id(scope: LimitScope, subject: string, group: string): string {
    return `${scope}\u0000${subject}\u0000${group}`;
  }

  get(scope: LimitScope, subject: string, group: string): RateLimitRule | undefined {
    return this.rules.get(RuleIndex.id(scope, subject, group));
  }

  get size(): number {
    return this.rules.size;
  }
}

const hasLimit = (rule: RateLimitRule | undefined): rule is RateLimitRule =>
  rule !== undefined && (rule.requestsPerMinute !== null || rule.tokensPerMinute !== null);

/**
 * The limits a call of `model` by this caller is counted against: its token's (the token's own
 * rule, else its group's default of tokens), its user's (likewise), and the model's for this user
 * (the model's rule for the caller's group, else the model's rule for every group). A subject's own
 * rule replaces its group's default whole, so an own rule with no limits lifts the default.
 */
export function limitsFor(
  index: RuleIndex,
  caller: { userId: number; tokenId: number; group: string },
  model: string,
): AppliedLimit[] {
  const out: AppliedLimit[] = [];
  const add = (rule: RateLimitRule | undefined, key: string, of: string) => {
    if (hasLimit(rule))
      out.push({ key, of, requestsPerMinute: rule.requestsPerMinute, tokensPerMinute: rule.tokensPerMinute });
  };
  const token = String(caller.tokenId);
  const user = String(caller.userId);
  add(index.get("token", token, "") ?? index.get("token", "", caller.group), `token:${token}`, "this token");
  add(index.get("user", user, "") ?? index.get("user", "", caller.group), `user:${user}`, "this user");
  add(
    index.get("model", model, caller.group) ?? index.get("model", model, ""),
    `model:${user}:${model}`,
    `model "${model}" for this user`,
  );
  return out;
}

/** The input tokens and output tokens of a usage, every bucket counted once. */
export function tokensOfUsage(usage: { promptTokens: number; outputTokens: number }): number {
  return Math.max(0, usage.promptTokens) + Math.max(0, usage.outputTokens);
}

/**
 * Checks a rule as an operator gave it: a token's or user's subject is its id, or "" with a group
 * (the group's default); a model's subject is its name. A 400 names the field at fault.
 */
export function checkRule(rule: RateLimitRule): RateLimitRule {
  if (!(LIMIT_SCOPES as readonly string[]).includes(rule.scope)) {
    throw new GatewayError("GW_ERR_VALIDATION", `scope must be one of ${LIMIT_SCOPES.join(", ")}`, { param: "scope" });
  }
  if (rule.scope === "model" && rule.subject === "") {
    throw new GatewayError("GW_ERR_VALIDATION", "a model's limit names the model in subject", { param: "subject" });
  }
  if (rule.scope !== "model") {
    if (rule.subject === "" && rule.group === "") {
      throw new GatewayError(
        "GW_ERR_VALIDATION",
        `a ${rule.scope}'s limit names the ${rule.scope} id in subject, or a group for the group's default`,
        { param: "subject" },
      );
    }
    if (rule.subject !== "" && !/^[1-9][0-9]{0,14}$/.test(rule.subject)) {
      throw new GatewayError("GW_ERR_VALIDATION", `subject must be a ${rule.scope} id`, { param: "subject" });
    }
    if (rule.subject !== "" && rule.group !== "") {
      throw new GatewayError(
        "GW_ERR_VALIDATION",
        `a ${rule.scope}'s own limit has no group; a group's default has no subject`,
        { param: "group" },
      );
    }
  }
  for (const [field, value] of [
    ["requestsPerMinute", rule.requestsPerMinute],
    ["tokensPerMinute", rule.tokensPerMinute],
  ] as const) {
    if (value !== null && (!Number.isSafeInteger(value) || value < 1)) {
      throw new GatewayError("GW_ERR_VALIDATION", `${field} must be a whole number of at least 1, or null`, {
        param: field,
      });
    }
  }
  return rule;
}
