// The rule lives in core (the admin API shows the reference back); the ledger writes it from here.
export { topUpLedgerReference } from "../core/top-up-reference.js";
