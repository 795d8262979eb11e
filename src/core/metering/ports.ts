import type { Selectable } from "../channel-selection.js";
import type { GatewayError } from "../errors.js";
import type { TokenUsage } from "../token-usage.js";
import type { UpstreamError } from "../upstream-error.js";

/** A channel as a metered call sees it: how it is picked, what it costs, what its upstream calls the model. */
export interface MeteredChannel extends Selectable {
  priceRatio: number;
  modelMapping: Record<string, string>;
}

/** A channel as an upstream adapter calls it. */
export interface CallableChannel extends MeteredChannel {
  baseUrl: string;
  key: string;
  settings: { timeoutMs?: number; firstByteTimeoutMs?: number };
}

/** One metered call: who asks, for which model; a surface's call adds what it asks. */
export interface MeteredCall {
  requestId: string;
  /** Ledger reference of the call (`content:<id>`, `chat:<id>`, `image:<id>`). */
  reference: string;
  caller: { userId: number; tokenId: number; group: string };
  model: string;
  /** Aborted when the client goes away: the upstream call is aborted with it. */
  signal: AbortSignal;
}

/** The usage a request-log row records: the sums every row has, and a token-priced call's buckets. */
export interface LoggedUsage {
  promptTokens: number;
  outputTokens: number;
  cachedTokens: number;
  buckets: TokenUsage | null;
}

/** One request-log row of a metered call. */
export interface MeteredLogRow {
  requestId: string;
  userId: number;
  tokenId: number;
  channelId: number | null;
  model: string;
  promptTokens: number;
  outputTokens: number;
  cachedTokens: number;
  /** The token buckets of a token-priced call (null for a call priced otherwise). */
  buckets: TokenUsage | null;
  /** The usage is the gateway's estimate: the upstream reported none. */
  estimated: boolean;
  quota: number;
  /** When the call began (Unix milliseconds). */
  startedAt: number;
  latencyMs: number;
  status: number;
  error: string | null;
}

/** A charge to open: a hold on the user's balance (and the token's usage) until it is settled or refunded. */
export interface ChargeInput {
  userId: number;
  tokenId: number | null;
  amount: number;
  /** Unique per charged thing: `task:<id>`, `image:<request id>`, `content:<request id>`. */
  reference: string;
  note?: string;
  /** Unix milliseconds by which the charge must be closed; default: now + the ledger's open time. */
  closeBy?: number;
}

/** The ledger as a metered call uses it. */
export interface MeteringLedger {
  charge(input: ChargeInput): Promise<void>;
  settle(reference: string, actualAmount: number, note?: string): Promise<{ uncollected: number }>;
  refund(reference: string, note?: string): Promise<unknown>;
  /** Records the cost of the usage seen so far on the open charge, and keeps it open until `closeBy`. */
  noteUsage(reference: string, seen: number, closeBy: number): Promise<void>;
}

/** What a call reserved of its rate limits; given back to its limits at settlement. */
export interface LimitReservation {
  /** Tokens reserved: the worst case of the call. */
  readonly tokens: number;
}

/** The rate limits of metered calls (requests and tokens per minute, per token, user and model). */
export interface CallLimits {
  /**
   * Counts one request of the call and reserves `tokens` (its worst case) against every limit
   * it falls under; throws a 429 GatewayError with Retry-After when one is over. Null when none
   * applies.
   */
  reserve(call: Pick<MeteredCall, "caller" | "model">, tokens: number): Promise<LimitReservation | null>;
  /** Replaces the reservation with the tokens the call used (0: refunded). Never throws. */
  settle(reservation: LimitReservation, tokens: number): void;
}

/** Everything a metered call uses, whatever its surface; `P` is the price of a model. */
export interface MeteringDeps<C extends MeteredChannel, P> {
  quotaPerUnit: number;
  maxChannelAttempts: number;
  /** How long a charge stays open without news; a stream's recorded progress extends it (ms). */
  chargeOpenMs: number;
  /** Least time between two records of a stream's usage on its open charge (ms). */
  usageRecordMs: number;
  channels: {
    /** Enabled channels of the surface's types serving `model` to `group`. */
    candidates(model: string, group: string): Promise<C[]>;
    /** Whether any channel of the surface's types lists `model` at all. */
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
    /** The model's price on this surface; null when none is set. */
    priceOf(model: string): Promise<P | null>;
    groupRatio(group: string): Promise<number>;
  };
  ledger: MeteringLedger;
  /** The rate limits of calls, when the gateway has any set. */
  limits?: CallLimits;
  logRequest(row: MeteredLogRow): void;
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

/** Where a streamed answer goes: the client connection, in its surface's format. */
export interface MeteredSink<E, Z = void> {
  /** Writes one event; resolves once the client can take more (backpressure). */
  event(event: E): Promise<void>;
  /**
   * The upstream's part is over and the call is being settled; `end` or `fail` follows. What is
   * written but not yet sent may wait for the end, to leave with it in one write.
   */
  settling(): void;
  /** Writes a final error event and ends the answer. */
  fail(error: GatewayError): Promise<void>;
  /** Ends the answer normally, with what the call's kind says of its billing (see `CallKind.ending`). */
  end(closing: Z): Promise<void>;
}

/** An upstream stream whose first event has arrived. */
export interface OpenedStream<E> {
  first: E;
  rest: AsyncGenerator<E>;
}
