import type { Selectable } from "../channel-selection.js";
import type { GatewayError } from "../errors.js";
import type { TokenPrice } from "../pricing.js";
import type { UpstreamError } from "../upstream-error.js";
import type { ModelLimits } from "./model-limits.js";

/** A channel as the content relay sees it. */
export interface ContentChannel extends Selectable {
  baseUrl: string;
  key: string;
  modelMapping: Record<string, string>;
  priceRatio: number;
  settings: { timeoutMs?: number; firstByteTimeoutMs?: number };
}

/**
 * One answer of the upstream, or one chunk of a streamed answer: parsed for billing, and the JSON
 * text it arrived as, so that the client gets those bytes without a second serialisation.
 */
export interface ContentChunk {
  value: unknown;
  text: string;
}

/** An upstream stream whose first chunk has arrived. */
export interface OpenedContentStream {
  first: ContentChunk;
  rest: AsyncGenerator<ContentChunk>;
}

/** The upstream protocol, as an adapter implements it; failures are UpstreamErrors. */
export interface ContentUpstream<C> {
  generate(channel: C, upstreamModel: string, body: UpstreamBody, signal: AbortSignal): Promise<ContentChunk>;
  openStream(channel: C, upstreamModel: string, body: UpstreamBody, signal: AbortSignal): Promise<OpenedContentStream>;
}

/** One request-log row of a content call. */
export interface ContentLogRow {
  requestId: string;
  userId: number;
  tokenId: number;
  channelId: number | null;
  model: string;
  promptTokens: number;
  outputTokens: number;
  cachedTokens: number;
  quota: number;
  latencyMs: number;
  status: number;
  error: string | null;
}

/** Everything the content relay uses, wired by the surface. */
export interface ContentRelayDeps<C extends ContentChannel> {
  quotaPerUnit: number;
  /** Limits assumed for a model the gateway has no published limits of (see model-limits.ts). */
  modelDefaults: ModelLimits;
  maxChannelAttempts: number;
  /** How long a charge stays open without news; a stream's recorded progress extends it (ms). */
  chargeOpenMs: number;
  /** Least time between two records of a stream's usage on its open charge (ms). */
  usageRecordMs: number;
  channels: {
    /** Enabled channels of the right protocol serving `model` to `group`. */
    candidates(model: string, group: string): Promise<C[]>;
    /** Whether any channel of the right protocol lists `model` at all. */
    isKnownModel(model: string): Promise<boolean>;
    /**
     * Hears every upstream attempt's outcome made for the user `userId`, for channel health and
     * metrics. Must not throw.
     */
    report(channel: C, error: UpstreamError | null, userId: number): void;
    /**
     * Takes one of the channel's concurrency slots (waiting for one if need be; a retryable
     * UpstreamError when none frees up). Returns the function that gives it back.
     */
    acquire(channel: C): Promise<() => void>;
  };
  prices: {
    contentPrice(model: string): Promise<TokenPrice | null>;
    groupRatio(group: string): Promise<number>;
  };
  ledger: {
    charge(input: {
      userId: number;
      tokenId: number | null;
      amount: number;
      reference: string;
      note?: string;
      /** Unix milliseconds by which the charge must be closed. */
      closeBy?: number;
    }): Promise<void>;
    settle(reference: string, actualAmount: number, note?: string): Promise<{ uncollected: number }>;
    refund(reference: string, note?: string): Promise<unknown>;
    /** Records the cost of the usage seen so far on the open charge, and keeps it open until `closeBy`. */
    noteUsage(reference: string, seen: number, closeBy: number): Promise<void>;
  };
  upstream: ContentUpstream<C>;
  logRequest(row: ContentLogRow): void;
  /** The gateway's logger, shared by every call: each line names its request (`requestId`). */
  log: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
  now?: () => number;
  /**
   * Aborted when the gateway stops and its drain window is over: a stream still open ends with
   * an error event and is billed for what it produced.
   */
  stopping?: AbortSignal;
}

/** Where a streamed answer goes: the client connection, in the format it asked for. */
export interface ContentSink {
  /** Writes one chunk; resolves once the client can take more (backpressure). */
  event(chunk: ContentChunk): Promise<void>;
  /**
   * The upstream's part is over and the call is being settled; `end` or `fail` follows. What is
   * written but not yet sent may wait for the end, to leave with it in one write.
   */
  settling(): void;
  /** Writes a final error event and ends the answer. */
  fail(error: GatewayError): Promise<void>;
  /** Ends the answer normally. */
  end(): Promise<void>;
}

/** The request body an adapter sends: its JSON text when the client's may go as it is, else the value. */
export interface UpstreamBody {
  value: unknown;
  text?: string;
}

/** One content call: who asks, for which model, with which body. */
export interface ContentCall {
  requestId: string;
  /** Ledger reference of the call (`content:<id>`). */
  reference: string;
  caller: { userId: number; tokenId: number; group: string };
  model: string;
  body: unknown;
  /**
   * The body's JSON text as the client sent it, when it says exactly what `body` says (no key
   * given twice): sent upstream as it is instead of serialising `body` again.
   */
  bodyText?: string;
  /** Size of the request body in bytes (the prompt's hold is bounded by it). */
  bodyBytes: number;
  /** Aborted when the client goes away: the upstream call is aborted with it. */
  signal: AbortSignal;
}
