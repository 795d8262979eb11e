/**
 * The plan of a PostgreSQL ledger batch, alone: CPU per call of `planTogether`
 * (src/store/postgres/ledger-batch.ts), which turns a batch's operations and the charges its
 * closings found open into the rows, balance moves and results its one statement writes, on a
 * batch as the group commit gathers it under load: 10 holds and 10 settlements of one user.
 *
 * Usage: node --import tsx bench/pg-batch-plan.ts [--batches 100000] [--rounds 6]
 */
import { parseArgs } from "node:util";
import { type OpenCharge, openCharge } from "../src/core/ledger/charge-rules.js";
import { planTogether } from "../src/store/postgres/ledger-batch.js";
import type { LedgerOp } from "../src/store/postgres/ledger-op.js";
import { median } from "./load.js";

const { values } = parseArgs({
  options: { batches: { type: "string", default: "100000" }, rounds: { type: "string", default: "6" } },
});
const batches = Number(values.batches);
const rounds = Number(values.rounds);

const items: { op: LedgerOp }[] = [];
const found = new Map<string, OpenCharge>();
for (let i = 0; i < 10; i++) {
  const reference = `content:hold-${i}`;
  const opening = openCharge({ userId: 42, tokenId: 7, amount: 8_000, reference });
  items.push({
    op: { kind: "hold", reference, opening, meta: { note: "hold", closeBy: 1_790_000_000_000, instance: "gateway-1" } },
  });
  const settled = `content:settle-${i}`;
  items.push({ op: { kind: "settle", reference: settled, actual: 1_250, note: "settled" } });
  found.set(settled, { userId: 42, tokenId: 7, held: 8_000 });
}

const samples: number[] = [];
for (let round = 0; round < rounds; round++) {
  const start = process.cpuUsage();
  let results = 0;
  for (let i = 0; i < batches; i++) results += planTogether(items, found).results.length;
  const used = process.cpuUsage(start);
  if (results !== batches * items.length) throw new Error("a plan lost operations");
  samples.push((used.user + used.system) / batches);
}
console.log(
  `planTogether, a batch of ${items.length} operations: ${median(samples).toFixed(2)} µs per call (median of ${rounds} rounds; from ${Math.min(...samples).toFixed(2)} to ${Math.max(...samples).toFixed(2)})`,
);
