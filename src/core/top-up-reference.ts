/**
 * A top-up's reference is the operator's (an invoice number, a payment id) and is unique per user:
 * the ledger, whose unique key is (reference, kind), keeps it as `user:<id>:<reference>`, so two
 * users may use the same one while a repeat for the same user applies nothing.
 */
export function topUpLedgerReference(userId: number, reference: string): string {
  return `user:${userId}:${reference}`;
}

/** The reference as the operator gave it, for a ledger row of any kind. */
export function shownReference(row: { kind: string; user_id: number; reference: string }): string {
  const prefix = `user:${Number(row.user_id)}:`;
  return row.kind === "topup" && row.reference.startsWith(prefix) ? row.reference.slice(prefix.length) : row.reference;
}
