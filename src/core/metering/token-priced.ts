import { GatewayError } from "../errors.js";
import { holdQuotaForTokens, quotaForTokens, type TokenPrice } from "../pricing.js";
import { outputTokensOf, promptTokensOf, type TokenUsage } from "../token-usage.js";
import type { CallKind, Settlement } from "./call-kind.js";
import type { MeteredCall } from "./ports.js";
import { loggedTokens } from "./request-log.js";
import { settlementFor, type TokenAccount } from "./token-settlement.js";

const REFUND: Settlement<TokenUsage> = { kind: "refund", note: "nothing was produced" };

/** The parts of a call kind every token-priced surface (content, chat) shares. */
export type TokenPricedParts = Pick<
  CallKind<MeteredCall, unknown, TokenPrice, TokenUsage, TokenAccount, unknown>,
  | "pricing"
  | "noPrice"
  | "noChannel"
  | "tooDear"
  | "quota"
  | "holdQuota"
  | "holdNote"
  | "explainRefusedHold"
  | "settlement"
  | "logged"
>;

/** How a token-priced surface names its input and its output limit, in its refusals. */
export interface TokenWords {
  /** "prompt", "input". */
  input: string;
  /** Who asks for the output, as a sentence starts ("generationConfig", "The request"). */
  asker: string;
  /** The field of the output limit, named in a refusal of a worst case beyond the safe integers. */
  param: string;
  /** What the client can lower to lower the hold. */
  lower: string;
}

/**
 * Priced per million tokens, held at the dearest candidate and settled to the usage the upstream
 * reported (else an estimate of the text produced; nothing produced is refunded).
 */
export function tokenPriced(words: TokenWords): TokenPricedParts {
  return {
    pricing: "metered",
    noPrice: (model) =>
      new GatewayError("GW_ERR_ACTION_UNAVAILABLE", `Model "${model}" has no price set, so it cannot be used.`),
    noChannel: (model) =>
      new GatewayError("GW_ERR_NO_CHANNEL", `No enabled channel serves model "${model}" right now.`),
    tooDear: () =>
      new GatewayError("GW_ERR_VALIDATION", `${words.asker} asks for more output than can be charged.`, {
        param: words.param,
      }),
    quota: quotaForTokens,
    holdQuota: holdQuotaForTokens,
    holdNote: (call) => `hold for ${call.model}, request ${call.requestId}`,
    explainRefusedHold: (err, amount, worst) =>
      explainTokenHold(
        err,
        amount,
        `${promptTokensOf(worst)} ${words.input} and ${outputTokensOf(worst)} output tokens`,
        words.lower,
      ),
    settlement(account, estimate) {
      const settlement = settlementFor(account, estimate);
      if (settlement.kind === "refund") return REFUND;
      const note = settlement.estimated ? "estimated usage" : "reported usage";
      const { clamped, ...usage } = settlement.usage;
      return { kind: "settle", usage, note, estimated: settlement.estimated, ...(clamped ? { clamped } : {}) };
    },
    logged: loggedTokens,
  };
}

/** A refused hold, told with what was held (`bound`), so that the client can ask for less. */
export function explainTokenHold(err: unknown, amount: number, bound: string, lower: string): unknown {
  if (!(err instanceof GatewayError)) return err;
  if (err.errorName !== "GW_ERR_INSUFFICIENT_QUOTA" && err.errorName !== "GW_ERR_TOKEN_QUOTA_EXCEEDED") return err;
  const whose = err.errorName === "GW_ERR_INSUFFICIENT_QUOTA" ? "the balance" : "the token's quota limit";
  return new GatewayError(
    err.errorName,
    `This request may cost up to ${amount} quota (${bound} at most), more than ${whose} allows; ${lower}.`,
  );
}
