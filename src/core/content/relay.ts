import { meterOnce } from "../metering/once.js";
import { meterStream } from "../metering/stream.js";
import { type ContentKind, contentKind } from "./content-kind.js";
import type { ModelLimits } from "./model-limits.js";
import type { ContentCall, ContentChannel, ContentChunk, ContentRelayDeps, ContentSink } from "./ports.js";

// The content surface's calls, run by the metered-call engine (core/metering/) with the content
// kind (content-kind.ts).

const kinds = new WeakMap<ModelLimits, ContentKind<ContentChannel>>();

/** The content kind of these model limits, made once. */
function kindOf<C extends ContentChannel>(defaults: ModelLimits): ContentKind<C> {
  let kind = kinds.get(defaults);
  if (!kind) {
    kind = contentKind(defaults);
    kinds.set(defaults, kind);
  }
  return kind as ContentKind<C>;
}

/** `:generateContent`: relays one call with failover and bills its reported usage. */
export async function generateContentCall<C extends ContentChannel>(
  deps: ContentRelayDeps<C>,
  call: ContentCall,
): Promise<ContentChunk> {
  const { upstream } = deps;
  const { answer } = await meterOnce(deps, kindOf<C>(deps.modelDefaults), call, (channel, model, body, signal) =>
    upstream.generate(channel, model, body, signal),
  );
  return answer;
}

/**
 * `:streamGenerateContent`: opens the stream with failover (until its first chunk arrived), then
 * writes every chunk to the sink as it comes; what was produced is billed, and the answer ends
 * only after the call is settled (see core/metering/stream.ts).
 *
 * Throws a GatewayError only when nothing was written to the sink.
 */
export function streamContentCall<C extends ContentChannel>(
  deps: ContentRelayDeps<C>,
  call: ContentCall,
  sink: ContentSink,
): Promise<void> {
  const { upstream } = deps;
  return meterStream(
    deps,
    kindOf<C>(deps.modelDefaults),
    call,
    (channel, model, body, signal) => upstream.openStream(channel, model, body, signal),
    sink,
    noClosing,
  );
}

function noClosing(): void {}
