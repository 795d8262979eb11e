import type { CallableChannel, MeteredCall, MeteredSink, MeteringDeps, OpenedStream } from "../metering/ports.js";
import type { TokenPrice } from "../pricing.js";
import type { ModelLimits } from "./model-limits.js";

/** A channel as the content relay sees it. */
export type ContentChannel = CallableChannel;

/**
 * One answer of the upstream, or one chunk of a streamed answer: parsed for billing, and the JSON
 * text it arrived as, so that the client gets those bytes without a second serialisation.
 */
export interface ContentChunk {
  value: unknown;
  text: string;
}

/** An upstream stream whose first chunk has arrived. */
export type OpenedContentStream = OpenedStream<ContentChunk>;

/** The upstream protocol, as an adapter implements it; failures are UpstreamErrors. */
export interface ContentUpstream<C> {
  generate(channel: C, upstreamModel: string, body: UpstreamBody, signal: AbortSignal): Promise<ContentChunk>;
  openStream(channel: C, upstreamModel: string, body: UpstreamBody, signal: AbortSignal): Promise<OpenedContentStream>;
  /**
   * `:countTokens` of a `generateContentRequest` or of `contents`: the upstream's answer, its
   * `totalTokens` checked. Null when the channel's vendor has no count endpoint.
   */
  countTokens?(
    channel: C,
    upstreamModel: string,
    body: UpstreamBody,
    signal: AbortSignal,
  ): Promise<CountedTokens | null>;
}

/** A count endpoint's answer: the total, and whatever else the vendor says (Gemini's details). */
export interface CountedTokens {
  totalTokens: number;
  [field: string]: unknown;
}

/** Everything the content relay uses: a metered call's ports, its model limits and its upstream. */
export interface ContentRelayDeps<C extends ContentChannel> extends MeteringDeps<C, TokenPrice> {
  /** Limits assumed for a model the gateway has no published limits of (see model-limits.ts). */
  modelDefaults: ModelLimits;
  upstream: ContentUpstream<C>;
}

/** Where a streamed answer goes: the client connection, in the format it asked for. */
export type ContentSink = MeteredSink<ContentChunk>;

/** The request body an adapter sends: its JSON text when the client's may go as it is, else the value. */
export interface UpstreamBody {
  value: unknown;
  text?: string;
}

/** One content call: who asks, for which model, with which body. */
export interface ContentCall extends MeteredCall {
  body: unknown;
  /**
   * The body's JSON text as the client sent it, when it says exactly what `body` says (no key
   * given twice): sent upstream as it is instead of serialising `body` again.
   */
  bodyText?: string;
  /** Size of the request body in bytes (the prompt's hold is bounded by it). */
  bodyBytes: number;
}
