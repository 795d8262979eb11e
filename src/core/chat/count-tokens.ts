import { type CountAsk, countInputTokens, type TokenCount } from "../metering/count-tokens.js";
import type { ChatRequest } from "./canonical.js";
import { inputTokenEstimate } from "./estimate.js";
import type { ChatChannel, ChatRelayDeps } from "./ports.js";

/**
 * The input tokens of a chat request (`count_tokens`): counted by the upstream of the channel a
 * call would go to, when its vendor has a count endpoint and can take the request as it is; else
 * the gateway's estimate (four characters a token, a bound per image). Free.
 */
export function countChatTokens<C extends ChatChannel>(
  deps: Pick<ChatRelayDeps<C>, "channels" | "log" | "upstreamFor">,
  ask: CountAsk & { request: ChatRequest },
): Promise<TokenCount<number>> {
  return countInputTokens(
    deps,
    ask,
    async (channel, upstreamModel, signal) => {
      const upstream = deps.upstreamFor(channel);
      if (!upstream.countTokens || upstream.untranslatable(ask.request)) return null;
      return upstream.countTokens(channel, upstreamModel, ask.request, signal);
    },
    () => inputTokenEstimate(ask.request),
  );
}
