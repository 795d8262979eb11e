import { GatewayError } from "../errors.js";
import type { CallKind } from "../metering/call-kind.js";
import { tokenPriced } from "../metering/token-priced.js";
import type { TokenPrice } from "../pricing.js";
import type { TokenUsage } from "../token-usage.js";
import { estimatePromptTokens } from "./estimate.js";
import { holdUsage } from "./hold.js";
import { type ModelLimits, modelLimits } from "./model-limits.js";
import type { ContentCall, ContentChunk, UpstreamBody } from "./ports.js";
import { ContentAccount } from "./usage.js";

/** A content answer's account, fed the chunks as they arrive (a whole answer is one chunk). */
class ContentChunkAccount extends ContentAccount {
  override observe(chunk: ContentChunk): void {
    super.observe(chunk.value);
  }

  observeAnswer(chunk: ContentChunk): void {
    super.observe(chunk.value);
  }
}

/** What goes upstream: the client's own JSON text when it may go as it is. */
function upstreamBody(call: ContentCall): UpstreamBody {
  return call.bodyText === undefined ? { value: call.body } : { value: call.body, text: call.bodyText };
}

export type ContentKind<C> = CallKind<ContentCall, UpstreamBody, TokenPrice, TokenUsage, ContentChunkAccount, C>;

/**
 * A Gemini-native content call: it holds every byte of the body as prompt tokens plus the output
 * and thinking it allows (see hold.ts), at the limits of its model (`defaults` for a model the
 * gateway has none of).
 */
export function contentKind<C>(defaults: ModelLimits): ContentKind<C> {
  return {
    ...tokenPriced({
      input: "prompt",
      asker: "generationConfig",
      param: "generationConfig",
      lower: "generationConfig.maxOutputTokens and thinkingConfig.thinkingBudget lower that bound",
    }),
    label: "content",
    unknownModel: (model) =>
      new GatewayError("GW_ERR_NOT_FOUND", `models/${model} is not found for API version v1beta.`),
    worstCase: (call) => holdUsage(call.body, call.bodyBytes, modelLimits(call.model, defaults)),
    estimate: (call) => estimatePromptTokens(call.body),
    upstreamRequest: upstreamBody,
    account: () => new ContentChunkAccount(),
  };
}
