import { GatewayError } from "../errors.js";
import type { CallKind } from "../metering/call-kind.js";
import { tokenPriced } from "../metering/token-priced.js";
import type { TokenPrice } from "../pricing.js";
import type { TokenUsage } from "../token-usage.js";
import { ChatAccount } from "./account.js";
import type { ChatRequest } from "./canonical.js";
import { holdUsage, inputTokenEstimate } from "./estimate.js";
import { inlineImages } from "./images.js";
import type { ChatCall, ChatChannel, ChatRelayDeps } from "./ports.js";

export type ChatKind<C> = CallKind<ChatCall, ChatRequest, TokenPrice, TokenUsage, ChatAccount, C>;

/**
 * The channels that can serve the request faithfully, at most as many as may be tried. When
 * channels exist but none can (the request uses a feature no serving protocol has), the client's
 * field is named in a 400.
 */
function translatable<C extends ChatChannel>(deps: ChatRelayDeps<C>, ordered: C[], call: ChatCall, attempts: number) {
  const usable: C[] = [];
  let refusal: { field: string; reason: string } | null = null;
  for (const channel of ordered) {
    const why = deps.upstreamFor(channel).untranslatable(call.request);
    if (why) refusal ??= why;
    else usable.push(channel);
  }
  if (usable.length === 0 && refusal) {
    throw new GatewayError("GW_ERR_VALIDATION", `${refusal.field}: ${refusal.reason}`, { param: refusal.field });
  }
  return usable.slice(0, Math.max(1, attempts));
}

/**
 * A chat call (OpenAI's or Anthropic's shape, in the canonical form): it holds every input byte
 * as a token, a bound per image and the output limit times `n`, at the highest ratio of the
 * channels that can translate it; images given by URL are downloaded only once the hold is
 * taken. An image counts the same bound whether given by URL or inline.
 */
export function chatKind<C extends ChatChannel>(deps: ChatRelayDeps<C>): ChatKind<C> {
  return {
    ...tokenPriced({
      input: "input",
      asker: "The request",
      param: "max_tokens",
      lower: "a lower output limit (max_tokens) lowers that bound",
    }),
    label: "chat",
    unknownModel: (model) =>
      new GatewayError("GW_ERR_NOT_FOUND", `The model "${model}" does not exist.`, { param: "model" }),
    narrow: (ordered, call, attempts) => translatable(deps, ordered, call, attempts),
    worstCase: (call) => holdUsage(call.request, deps.modelMaxOutputTokens),
    estimate: (call) => inputTokenEstimate(call.request),
    upstreamRequest: (call) => call.request,
    prepare: (request, call) => inlineImages(request, (url, field) => deps.fetchImage(url, field, call.signal)),
    unusableInput: "an input image could not be used",
    account: () => new ChatAccount(),
  };
}
