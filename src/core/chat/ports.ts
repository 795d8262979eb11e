import type { CallableChannel, MeteredCall, MeteredSink, MeteringDeps } from "../metering/ports.js";
import type { TokenPrice } from "../pricing.js";
import type { TokenUsage } from "../token-usage.js";
import type { UpstreamError } from "../upstream-error.js";
import type { ChatAnswer, ChatEvent, ChatImage, ChatRequest } from "./canonical.js";

/** A channel as the chat relay sees it: a content channel with its protocol. */
export interface ChatChannel extends CallableChannel {
  type: string;
}

/** Why an upstream cannot serve a request faithfully: the client's field at fault, and why. */
export interface Untranslatable {
  field: string;
  reason: string;
}

/** One upstream protocol of chat, as an adapter implements it; failures are UpstreamErrors. */
export interface ChatUpstream<C> {
  /** Null when the request can be sent as it is; else the feature this protocol lacks. */
  untranslatable(request: ChatRequest): Untranslatable | null;
  complete(channel: C, upstreamModel: string, request: ChatRequest, signal: AbortSignal): Promise<ChatAnswer>;
  /**
   * Sends a streamed request; resolves once the upstream accepted it. The events follow as they
   * arrive; a failure while reading them is thrown by the generator.
   */
  openStream(
    channel: C,
    upstreamModel: string,
    request: ChatRequest,
    signal: AbortSignal,
  ): Promise<AsyncGenerator<ChatEvent>>;
  /** The input tokens of the request by the vendor's own count endpoint, where it has one (free). */
  countTokens?(channel: C, upstreamModel: string, request: ChatRequest, signal: AbortSignal): Promise<number>;
}

/** Everything the chat relay uses: a metered call's ports, and more. */
export interface ChatRelayDeps<C extends ChatChannel> extends MeteringDeps<C, TokenPrice> {
  /** Output tokens a model may produce at most, when the request sets no limit. */
  modelMaxOutputTokens: number;
  /** The adapter of a channel's protocol. */
  upstreamFor(channel: C): ChatUpstream<C>;
  /** Downloads an image the client gave by URL (SSRF-guarded); a 400 naming `field` on failure. */
  fetchImage(url: string, field: string, signal: AbortSignal): Promise<ChatImage>;
}

/** What a stream's end is told: the usage billed (reported, or estimated). */
export type ChatClosingUsage = TokenUsage;

/** Where a streamed answer goes: the client connection, in its surface's format. */
export type ChatSink = MeteredSink<ChatEvent, ChatClosingUsage>;

/** One chat call: who asks, for which model, with which request. */
export interface ChatCall extends MeteredCall {
  request: ChatRequest;
}

export type { UpstreamError };
