import type { UsageRecord } from "../../src/simulator/server.js";
import { ACTION_PRICE_NAMES } from "./action-phase.js";
import {
  type BalanceRow,
  type ChargeRow,
  type ClientCall,
  closureFigures,
  creditLineFigures,
  idempotencyFigures,
  type KeyCharges,
  type Kill,
  type RunPrices,
  recomputeSpend,
} from "./money-checks.js";
import type { SecondProcessFigures } from "./sqlite-owner.js";
import { VIDEO_PRICE_NAME } from "./video-phase.js";

/** The prices the run sets through the admin API before any call (the recomputation's source). */
export const RUN_PRICES: RunPrices = {
  quotaPerUnit: 500_000,
  perCall: {
    "audioa:MUSIC": 0.1,
    "audiob:MUSIC": 0.1,
    "audioa:LYRICS": 0.005,
    "audiob:LYRICS": 0.005,
    "image-model": 0.039,
    // Per second of video: a video costs this x its seconds.
    [VIDEO_PRICE_NAME]: 0.07,
    ...Object.fromEntries(ACTION_PRICE_NAMES.map((name) => [name, 0.02])),
    "audioa:UPLOAD": 0.01,
    "audiob:UPLOAD": 0.01,
  },
  tokens: { "gemini-2.5-flash": { input: 0.3, output: 2.5, cachedRatio: 0.1 } },
};

export interface MoneyInputs {
  chargeRows: ChargeRow[];
  kills: Kill[];
  boundMs: number;
  balances: BalanceRow[];
  /** Each recomputed user's starting balance (users the run created, not the fuzz user). */
  initial: Map<number, number>;
  calls: ClientCall[];
  records: UsageRecord[];
  keys: KeyCharges[];
  sqlite: SecondProcessFigures;
}

/** The money checks over one run: figures to print (figure, value, expected) and violations. */
export function checkMoney(input: MoneyInputs): {
  figures: Array<[string, string, string]>;
  perUser: string[];
  violations: string[];
} {
  const violations: string[] = [];
  const closure = closureFigures(input.chargeRows, input.kills, input.boundMs);
  violations.push(...closure.violations);
  const credit = creditLineFigures(input.balances);
  violations.push(...credit.violations);

  const balance = new Map(input.balances.map((b) => [b.id, b.quota]));
  const spent = new Map<number, number>();
  for (const [id, start] of input.initial) spent.set(id, start - (balance.get(id) ?? start));
  const recomputed = recomputeSpend(input.calls, input.records, RUN_PRICES, spent);
  for (const r of recomputed.filter((x) => !x.matches)) {
    violations.push(
      `user ${r.userId}: spent ${r.spent}, but the simulator's usage at the run's prices allows ${r.low === r.high ? r.low : `${r.low}..${r.high} (not this sum)`}`,
    );
  }
  const undetermined = recomputed.reduce((n, r) => n + r.open, 0);
  const spentTotal = recomputed.reduce((n, r) => n + r.spent, 0);

  const keys = idempotencyFigures(input.keys);
  violations.push(...keys.violations);
  violations.push(...input.sqlite.violations);

  const figures: Array<[string, string, string]> = [
    [
      "charges left open by the kills; closed; slowest closing after its instance's restart",
      `${closure.leftOpen}; ${closure.closed}; ${closure.slowestMs} ms`,
      `all closed, each within ${input.boundMs} ms`,
    ],
    ["charges open once the run settled", `${closure.stillOpen}`, "0"],
    ["balances below minus their credit line", `${credit.below}`, "0"],
    ["users in debt (within their credit line)", `${credit.inDebt}`, "exercised when > 0"],
    [
      "users whose spend equals the recomputation from the simulator's usage",
      `${recomputed.filter((r) => r.matches).length}/${recomputed.length}`,
      "all",
    ],
    [
      "calls recomputed; of them killed or cut (0 or a usage the simulator wrote)",
      `${input.calls.length}; ${undetermined}`,
      "",
    ],
    ["quota spent by the recomputed users", `${spentTotal}`, ""],
    [
      "Idempotency-Keys; taken over after a kill; charged more than once",
      `${keys.keys}; ${keys.retakenKeys}; ${keys.violations.length}`,
      "0 charged twice (a task key's one task: the tasks primary key, not a check)",
    ],
    ...input.sqlite.attempts.map((a): [string, string, string] => [
      `second process on one SQLite file through ${a.via}: exit code; one line saying why`,
      `${a.exitCode}; ${a.explained}`,
      "1; true (refused)",
    ]),
    [
      "first SQLite gateway after them: answering and writing; integrity_check once stopped",
      `${input.sqlite.firstAnswering}; ${input.sqlite.integrity}`,
      "true; ok",
    ],
  ];
  const perUser = recomputed.map((r) => {
    const b = input.balances.find((x) => x.id === r.userId);
    const expected = r.low === r.high ? `${r.low}` : `${r.low}..${r.high}`;
    return `user ${r.userId}: balance ${b?.quota} (credit line ${b?.credit_line}), spent ${r.spent}, recomputed ${expected} over ${r.calls} calls (${r.open} killed or cut): ${r.matches ? "equal" : "DIFFERS"}`;
  });
  return { figures, perUser, violations };
}
