import type { GatewayError } from "../errors.js";
import type { Ratios } from "../pricing.js";
import type { LoggedUsage } from "./ports.js";

/** How a call's charge closes: settled to what it used, or refunded. */
export type Settlement<U> =
  | { kind: "refund"; note: string }
  | {
      kind: "settle";
      usage: U;
      note: string;
      /** The usage is the gateway's estimate (the upstream reported none): a warning is logged. */
      estimated?: boolean;
      /** Fields of the reported usage that were clamped to be counted: a warning is logged. */
      clamped?: readonly string[];
    };

/** What an answer has produced so far, as a call's kind counts it. */
export interface MeteredAccount<E, A> {
  /** One event of a streamed answer. */
  observe(event: E): void;
  /** A whole answer. */
  observeAnswer(answer: A): void;
  /** The answer said it is complete: a stream that ends without it was cut. */
  readonly complete: boolean;
}

/**
 * What a metered surface tells the engine (see plan.ts, once.ts, stream.ts, finish.ts): its
 * label, its refusals in its own words, how its price is read, the worst case it holds, what it
 * counts of an answer and how that settles. `Call` is the surface's call, `Sent` what goes
 * upstream, `P` a model's price, `U` a usage, `Acc` its account, `C` a channel.
 */
export interface CallKind<Call, Sent, P, U, Acc, C> {
  /** What the call is, in log lines ("content", "chat", "images"). */
  label: string;
  /**
   * `metered`: held at the dearest candidate's ratio and settled to the cost of what was used,
   * above the hold too (down to the credit line). `quoted`: held at the first candidate's ratio,
   * never settled above that hold.
   */
  pricing: "metered" | "quoted";
  /** The refusals of a plan, told in the surface's words. */
  unknownModel(model: string): GatewayError;
  noPrice(model: string): GatewayError;
  noChannel(model: string): GatewayError;
  /** A worst case whose quota is beyond the safe integers. */
  tooDear(): GatewayError;
  /** The ordered candidates the call may go to (e.g. those that can translate it). */
  narrow?(ordered: C[], call: Call, maxAttempts: number): C[];
  /** The most the call can use: what is held. Throws a 400 naming a field the bound comes from. */
  worstCase(call: Call): U;
  quota(usage: U, price: P, ratios: Ratios): number;
  /** The quota held for the worst case (default: `quota` of it). */
  holdQuota?(worst: U, price: P, ratios: Ratios): number;
  /** A likely input size, for settling an answer whose upstream reported no usage. */
  estimate?(call: Call): number;
  /** The note of the hold's ledger row. */
  holdNote(call: Call, worst: U): string;
  /** A refused hold, told with what was held. */
  explainRefusedHold?(err: unknown, amount: number, worst: U): unknown;
  /** What goes upstream. */
  upstreamRequest(call: Call): Sent;
  /**
   * After the hold, before the upstream call: brings in what the call names by URL. A failure
   * refunds the hold (`unusableInput` is the refund's note) and is the call's error.
   */
  prepare?(sent: Sent, call: Call): Promise<Sent>;
  unusableInput?: string;
  account(): Acc;
  settlement(account: Acc, estimate: number, call: Call): Settlement<U>;
  /** The usage of a request-log row. */
  logged(usage: U | null): LoggedUsage;
  /** A failure as the client sees it (default: `toClientError`). */
  clientError?(err: unknown): GatewayError;
  /** A failed call's request-log row names the last channel tried, and the failure's own message. */
  logsAttempt?: boolean;
}
