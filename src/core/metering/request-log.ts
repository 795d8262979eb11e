import type { TokenUsage } from "../pricing.js";
import type { MeteredCall, MeteringDeps } from "./ports.js";

/** Writes a metered call's one request-log row. */
export function logRow(
  deps: Pick<MeteringDeps<never, unknown>, "logRequest" | "now">,
  call: Pick<MeteredCall, "requestId" | "caller" | "model">,
  startedAt: number,
  fields: { channelId: number | null; usage: TokenUsage; quota: number; status: number; error: string | null },
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
    quota: fields.quota,
    startedAt,
    latencyMs: Math.max(0, (deps.now ?? Date.now)() - startedAt),
    status: fields.status,
    error: fields.error,
  });
}
