import { orderChannels } from "../channel-selection.js";
import { tokensOfUsage } from "../limits/rate-limit-rules.js";
import type { Ratios } from "../pricing.js";
import type { CallKind } from "./call-kind.js";
import type { LimitReservation, MeteredCall, MeteredChannel, MeteringDeps } from "./ports.js";
import { logRow } from "./request-log.js";
import { toClientError } from "./upstream-failure.js";

/** What a call was planned with before its upstream call. */
export interface Plan<C, P, Sent> {
  /** The channels it may go to, in the order they are tried. */
  ordered: C[];
  price: P;
  groupRatio: number;
  /** The kind's estimate of the input (see `CallKind.estimate`). */
  estimate: number;
  /** Quota held. */
  held: number;
  /** What the call reserved of its rate limits (returned at settlement). */
  limited: LimitReservation | null;
  /** What goes upstream. */
  request: Sent;
  startedAt: number;
}

/** The ratios of a call on `channel`. */
export function ratiosOn(deps: { quotaPerUnit: number }, groupRatio: number, channel: MeteredChannel): Ratios {
  return { groupRatio, channelRatio: channel.priceRatio, quotaPerUnit: deps.quotaPerUnit };
}

function dearest<C extends MeteredChannel>(ordered: C[]): C {
  return ordered.reduce((a, b) => (b.priceRatio > a.priceRatio ? b : a));
}

/**
 * Checks that the model can be served and billed, orders the channels, and holds the most the
 * call can cost (the kind's worst case; at the dearest candidate's ratio when its pricing is
 * metered, since failover may land on any): a balance (down to minus its credit line) or a
 * token's limit that does not cover it refuses the call before any upstream call. Then brings in
 * what the call names by URL, refunding the hold when that fails. Before the hold, the call is
 * counted against its rate limits and reserves its worst case in tokens there (returned when the
 * hold is refused or refunded, or at settlement). A refusal is logged and thrown
 * as the error the client sees.
 */
export async function planCall<Call extends MeteredCall, Sent, P, U, Acc, C extends MeteredChannel>(
  deps: MeteringDeps<C, P>,
  kind: CallKind<Call, Sent, P, U, Acc, C>,
  call: Call,
): Promise<Plan<C, P, Sent>> {
  const startedAt = (deps.now ?? Date.now)();
  const { model, caller } = call;
  try {
    if (!(await deps.channels.isKnownModel(model))) throw kind.unknownModel(model);
    const price = await deps.prices.priceOf(model);
    if (price === null) throw kind.noPrice(model);
    const candidates = await deps.channels.candidates(model, caller.group);
    if (candidates.length === 0) throw kind.noChannel(model);
    let ordered = orderChannels(candidates);
    if (kind.narrow) ordered = kind.narrow(ordered, call, deps.maxChannelAttempts);
    const groupRatio = await deps.prices.groupRatio(caller.group);
    const worst = kind.worstCase(call);
    const estimate = kind.estimate ? kind.estimate(call) : 0;
    const holdOn = kind.pricing === "metered" ? dearest(ordered) : (ordered[0] as C);
    const held = (kind.holdQuota ?? kind.quota)(worst, price, ratiosOn(deps, groupRatio, holdOn));
    if (!Number.isSafeInteger(held)) throw kind.tooDear();
    // The rate limits count the call and reserve its worst case in tokens before the hold.
    const limited = deps.limits ? await deps.limits.reserve(call, tokensOfUsage(kind.logged(worst))) : null;
    const unreserve = () => {
      if (limited) deps.limits?.settle(limited, 0);
    };
    try {
      await deps.ledger.charge({
        userId: caller.userId,
        tokenId: caller.tokenId,
        amount: held,
        reference: call.reference,
        note: kind.holdNote(call, worst),
        closeBy: startedAt + deps.chargeOpenMs,
      });
    } catch (err) {
      unreserve();
      throw kind.explainRefusedHold ? kind.explainRefusedHold(err, held, worst) : err;
    }
    let request = kind.upstreamRequest(call);
    if (kind.prepare) {
      try {
        request = await kind.prepare(request, call);
      } catch (err) {
        await deps.ledger.refund(call.reference, kind.unusableInput).catch((refundErr: unknown) => {
          // The charge stays open with nothing seen on it: the charge reaper refunds it.
          deps.log.warn({ err: refundErr, reference: call.reference }, `${kind.label} hold could not be refunded now`);
        });
        unreserve();
        throw err;
      }
    }
    return { ordered, price, groupRatio, estimate, held, limited, request, startedAt };
  } catch (err) {
    const error = toClientError(err);
    logRow(deps, call, startedAt, {
      channelId: null,
      usage: kind.logged(null),
      estimated: false,
      quota: 0,
      status: error.status,
      error: error.message,
    });
    throw error;
  }
}
