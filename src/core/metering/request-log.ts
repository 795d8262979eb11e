import { outputTokensOf, promptTokensOf, type TokenUsage } from "../token-usage.js";
import type { LoggedUsage, MeteredCall, MeteringDeps } from "./ports.js";

/** A token-priced call's usage as its request-log row records it: the sums, and each bucket. */
export function loggedTokens(usage: TokenUsage | null): LoggedUsage {
  if (!usage) return { promptTokens: 0, outputTokens: 0, cachedTokens: 0, buckets: null };
  const { clamped: _, ...buckets } = usage as TokenUsage & { clamped?: unknown };
  return {
    promptTokens: promptTokensOf(usage),
    outputTokens: outputTokensOf(usage),
    cachedTokens: usage.cacheRead,
    buckets,
  };
}

/** Writes a metered call's one request-log row. */
export function logRow(
  deps: Pick<MeteringDeps<never, unknown>, "logRequest" | "now">,
  call: Pick<MeteredCall, "requestId" | "caller" | "model">,
  startedAt: number,
  fields: {
    channelId: number | null;
    usage: LoggedUsage;
    estimated: boolean;
    quota: number;
    status: number;
    error: string | null;
  },
) {
  deps.logRequest({
    requestId: call.requestId,
    userId: call.caller.userId,
    tokenId: call.caller.tokenId,
    channelId: fields.channelId,
    model: call.model,
    promptTokens: fields.usage.promptTokens,
    outputTokens: fields.usage.outputTokens,
    cachedTokens: fields.usage.cachedTokens,
    buckets: fields.usage.buckets,
    estimated: fields.estimated,
    quota: fields.quota,
    startedAt,
    latencyMs: Math.max(0, (deps.now ?? Date.now)() - startedAt),
    status: fields.status,
    error: fields.error,
  });
}
