/**
 * Parameters of PostgreSQL's fixed statements as array literals, alone: CPU per batch of `pg`'s
 * own conversion of each array (`prepareValue`) against `arrayLiteral` (src/store/postgres/
 * fixed-statement.ts), on the arrays of one ledger batch as the group commit sends it under load
 * (10 holds and 10 settlements: the ledger rows' users, tokens, kinds, amounts, references and
 * notes, the holds' charges, the users' and tokens' sums, the closings) and on one request-log
 * flush of 500 rows (14 arrays).
 *
 * Usage: node --import tsx bench/pg-array-literal.ts [--batches 20000] [--rounds 6]
 */
import { parseArgs } from "node:util";
import pg from "pg";
import { newRequestId } from "../src/core/ids.js";
import { arrayLiteral } from "../src/store/postgres/fixed-statement.js";
import { median } from "./load.js";

const { values } = parseArgs({
  options: { batches: { type: "string", default: "20000" }, rounds: { type: "string", default: "6" } },
});
const batches = Number(values.batches);
const rounds = Number(values.rounds);

const references = (n: number) => Array.from({ length: n }, () => `content:${newRequestId()}`);
const ledgerBatch: unknown[][] = (() => {
  const refs = references(20);
  const holds = refs.slice(0, 10);
  return [
    refs.map(() => 42),
    refs.map(() => 7),
    refs.map((_, i) => (i < 10 ? "charge" : "settle")),
    refs.map((_, i) => (i < 10 ? -8_000 : 6_750)),
    refs,
    refs.map((r) => `hold for gemini-2.5-flash, request ${r.slice(8)}`),
    holds,
    holds.map(() => 42),
    holds.map(() => 7),
    holds.map(() => 8_000),
    holds.map(() => 1_790_000_000_000),
    holds.map(() => "gateway-7f3a9c2e"),
    [42],
    [-80_000],
    [67_500],
    [7],
    [-80_000],
    [67_500],
    refs.slice(10),
    refs.slice(10).map(() => "settled"),
    refs.slice(10).map(() => 1_250),
    refs.slice(10).map(() => "settled: 12 prompt and 40 output tokens"),
    refs.slice(10).map(() => 42),
    refs.slice(10).map(() => 7),
    refs.slice(10).map(() => 8_000),
  ];
})();
const flush: unknown[][] = (() => {
  const ids = references(500);
  const n = (v: number | null) => ids.map(() => v);
  return [
    n(1_790_000_000),
    ids,
    n(42),
    n(7),
    n(3),
    ids.map(() => "gemini"),
    ids.map(() => "gemini-2.5-flash"),
    n(12),
    n(40),
    n(0),
    n(1_250),
    n(3),
    n(200),
    n(null),
  ];
})();

const ways = {
  "pg's prepareValue": (array: unknown[]) =>
    (pg as unknown as { utils: { prepareValue(v: unknown): unknown } }).utils.prepareValue(array),
  arrayLiteral,
} as const;
const shapes = {
  "ledger batch (25 arrays, 20 operations)": ledgerBatch,
  "request-log flush (14 arrays, 500 rows)": flush,
} as const;

for (const [shape, arrays] of Object.entries(shapes)) {
  const samples = new Map<string, number[]>();
  const times = shape.startsWith("request-log") ? Math.max(1, Math.floor(batches / 50)) : batches;
  for (let round = 0; round < rounds; round++) {
    for (const [name, convert] of Object.entries(ways)) {
      const start = process.cpuUsage();
      let length = 0;
      for (let i = 0; i < times; i++) for (const array of arrays) length += (convert(array) as string).length;
      const used = process.cpuUsage(start);
      if (length === 0) throw new Error(`${name} made nothing`);
      samples.set(name, [...(samples.get(name) ?? []), (used.user + used.system) / times]);
    }
  }
  const cells = [...samples].map(([name, s]) => `${name} ${median(s).toFixed(1)} µs`);
  console.log(`${shape}: ${cells.join(", ")} (medians of ${rounds} rounds)`);
}
