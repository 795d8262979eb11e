import type { LedgerObserver } from "../store/ledger.js";
import type { GatewayMetrics } from "./registry.js";

/** A ledger observer that counts quota charged, refunded, settled and topped up. */
export function quotaObserver(metrics: GatewayMetrics): LedgerObserver {
  return ({ kind, amount }) => {
    switch (kind) {
      case "charge":
        metrics.quotaCharged.inc(-amount);
        return;
      case "refund":
        metrics.quotaRefunded.inc(amount);
        return;
      case "settle":
        // A positive settlement gives quota back; a negative one takes the extra real cost.
        metrics.quotaSettled.inc({ direction: amount > 0 ? "returned" : "collected" }, Math.abs(amount));
        return;
      case "topup":
        metrics.quotaToppedUp.inc(amount);
        return;
      case "adjust":
        return;
    }
  };
}
