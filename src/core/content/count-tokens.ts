import { type CountAsk, countInputTokens, type TokenCount } from "../metering/count-tokens.js";
import { estimatePromptTokens } from "./estimate.js";
import type { ContentChannel, ContentRelayDeps, CountedTokens } from "./ports.js";

/** The prompt of a `:countTokens` body: its `generateContentRequest`, else the body itself. */
function promptOf(body: unknown): Record<string, unknown> {
  const request = (body as { generateContentRequest?: unknown } | null)?.generateContentRequest ?? body;
  return request && typeof request === "object" ? (request as Record<string, unknown>) : {};
}

/**
 * What goes to the upstream's `:countTokens`: `contents` alone as they came; anything more (a
 * system instruction, tools) inside a `generateContentRequest` naming the upstream's model.
 */
export function upstreamCountBody(body: unknown, upstreamModel: string): Record<string, unknown> {
  const prompt = promptOf(body);
  const wrapped = (body as { generateContentRequest?: unknown } | null)?.generateContentRequest !== undefined;
  if (!wrapped && Object.keys(prompt).every((field) => field === "contents")) return prompt;
  const { model: _model, ...rest } = prompt;
  return { generateContentRequest: { model: `models/${upstreamModel}`, ...rest } };
}

/**
 * `:countTokens`: counted by the upstream of the channel a call of the model would go to, when its
 * vendor has a count endpoint; else the gateway's estimate (four characters a token, 258 per media
 * part: what the relay bills by when usage is missing). Free.
 */
export function countContentTokens<C extends ContentChannel>(
  deps: Pick<ContentRelayDeps<C>, "channels" | "log" | "upstream">,
  ask: CountAsk & { body: unknown },
): Promise<TokenCount<CountedTokens>> {
  return countInputTokens(
    deps,
    ask,
    async (channel, upstreamModel, signal) => {
      if (!deps.upstream.countTokens) return null;
      const value = upstreamCountBody(ask.body, upstreamModel);
      return deps.upstream.countTokens(channel, upstreamModel, { value }, signal);
    },
    () => ({ totalTokens: estimatePromptTokens(promptOf(ask.body)) }),
  );
}
