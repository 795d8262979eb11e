import type { ContentChannel, ContentLogRow, ContentRelayDeps } from "../content/ports.js";
import type { GatewayError } from "../errors.js";
import type { UpstreamError } from "../upstream-error.js";
import type { ChatAnswer, ChatEvent, ChatImage, ChatRequest } from "./canonical.js";

/** A channel as the chat relay sees it: a content channel with its protocol. */
export interface ChatChannel extends ContentChannel {
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
}

/** Everything the chat relay uses: the content relay's ports (channels, prices, ledger, log) and more. */
export interface ChatRelayDeps<C extends ChatChannel>
  extends Omit<ContentRelayDeps<C>, "upstream" | "logRequest" | "modelDefaults"> {
  /** Output tokens a model may produce at most, when the request sets no limit. */
  modelMaxOutputTokens: number;
  /** The adapter of a channel's protocol. */
  upstreamFor(channel: C): ChatUpstream<C>;
  /** Downloads an image the client gave by URL (SSRF-guarded); a 400 naming `field` on failure. */
  fetchImage(url: string, field: string, signal: AbortSignal): Promise<ChatImage>;
  logRequest(row: ContentLogRow): void;
}

/** Where a streamed answer goes: the client connection, in its surface's format. */
export interface ChatSink {
  /** Writes one event; resolves once the client can take more (backpressure). */
  event(event: ChatEvent): Promise<void>;
  /**
   * The upstream's part is over and the call is being settled; `end` or `fail` follows. What is
   * written but not yet sent may wait for the end, to leave with it in one write.
   */
  settling(): void;
  /** Writes an error event and ends the answer. */
  fail(error: GatewayError): Promise<void>;
  /** Ends the answer normally; `usage` is what was billed (reported, or estimated). */
  end(usage: {
    inputTokens: number;
    outputTokens: number;
    cachedInputTokens: number;
    reasoningTokens: number;
  }): Promise<void>;
}

/** One chat call: who asks, for which model, with which request. */
export interface ChatCall {
  requestId: string;
  /** Ledger reference of the call (`chat:<id>`). */
  reference: string;
  caller: { userId: number; tokenId: number; group: string };
  model: string;
  request: ChatRequest;
  /** Aborted when the client goes away: the upstream call is aborted with it. */
  signal: AbortSignal;
}

export type { UpstreamError };
