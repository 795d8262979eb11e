/**
 * The money checks of the many-instances run, as functions of plain rows: what the store holds,
 * what the clients were answered and what the simulator reports it delivered. Kept free of I/O so
 * that each can be shown to fire on crafted rows (test/reliability/money-checks.test.ts).
 */
import type { ReportedUsage, UsageRecord } from "../../src/simulator/server.js";

/** Prices as the run configured them (currency units), written down by the run, not read back. */
export interface RunPrices {
  quotaPerUnit: number;
  /** Per call: a task action (`audioa:MUSIC`) or one image (`image-model`). */
  perCall: Record<string, number>;
  /** Per million tokens, for content models. */
  tokens: Record<string, { input: number; output: number; cachedRatio: number }>;
}

/** Rounds away float noise, then up: the gateway's documented rounding (never free by rounding). */
function quotaOf(units: number, prices: RunPrices, ratio: number): number {
  const x = units * prices.quotaPerUnit * ratio;
  return Math.ceil(Math.round(x * 1e6) / 1e6);
}

/**
 * Quota of one call priced per call (a task, one image) at a group ratio x channel ratio; a video's
 * price is per second, times its `units` seconds.
 */
export function perCallQuota(prices: RunPrices, name: string, ratio: number, units = 1): number {
  const price = prices.perCall[name];
  if (price === undefined) throw new Error(`no price configured for ${name}`);
  return quotaOf(price * units, prices, ratio);
}

/** Quota of the usage a content answer reported: fresh input, cached input, candidates + thoughts. */
export function usageQuota(prices: RunPrices, model: string, usage: ReportedUsage, ratio: number): number {
  const price = prices.tokens[model];
  if (!price) throw new Error(`no price configured for ${model}`);
  const prompt = Math.max(0, usage.promptTokenCount ?? 0);
  const cached = Math.min(Math.max(0, usage.cachedContentTokenCount ?? 0), prompt);
  const output = Math.max(0, usage.candidatesTokenCount ?? 0) + Math.max(0, usage.thoughtsTokenCount ?? 0);
  const units =
    ((prompt - cached) * price.input + cached * price.input * price.cachedRatio + output * price.output) / 1e6;
  return quotaOf(units, prices, ratio);
}

/** One call a client of the run made (all its attempts share `tag`, which its prompt carries). */
export interface ClientCall {
  tag: string;
  userId: number;
  /**
   * `action`: a task of the action phase, which works on a clip of the run rather than a prompt the
   * simulator could tag; it must end SUCCESS (the outcome check), so it costs exactly its price.
   */
  kind: "content" | "image" | "task" | "action" | "video";
  /** The price name: the content model, `image-model`, or `audioa:MUSIC`. */
  priceName: string;
  /** Group ratio x channel ratio the call is priced at. */
  ratio: number;
  /**
   * The client got a whole answer: a complete 200 (a finished stream, an image body, a task id
   * from an instance that lived on to send it).
   */
  answered: boolean;
  /** Images in the answer the client got. */
  images?: number;
  /** Videos: the seconds the per-second price is multiplied by. */
  units?: number;
  /**
   * Videos: how the gateway ended a video whose copy to storage was cut by a kill (another instance
   * finished it: charged; or it failed: refunded). Its cost follows that end, not the upstream's.
   */
  expectEnd?: "success" | "failure";
}

/**
 * The amounts a call may have cost, from the simulator's records of it alone:
 *
 * - answered content: the price of the last usage the simulator reported (the final chunk's);
 * - answered images: the per-image price x the images the client received;
 * - answered task or video: its price (a video's per second x its seconds) when the simulator
 *   ends it in success, else 0 (also when the simulator never received it: refused, or its send
 *   was lost); a video whose copy to storage was cut by a kill costs what the gateway's end says;
 * - a call the client did not get a whole answer to (its instance was killed, its stream cut):
 *   0 (refunded), or the price of any usage the simulator had written by then (the gateway settles
 *   to the usage it recorded, which is one of those, however far behind the writes it was), or
 *   for images and tasks the price of what one upstream attempt delivered.
 */
export function allowedAmounts(call: ClientCall, records: UsageRecord[], prices: RunPrices): number[] {
  const price = (usage: ReportedUsage) => usageQuota(prices, call.priceName, usage, call.ratio);
  if (call.kind === "content") {
    if (call.answered) {
      const finals = records
        .filter((r) => r.usage.length > 0)
        .map((r) => price(r.usage[r.usage.length - 1] as ReportedUsage));
      return finals.length > 0 ? [...new Set(finals)] : [0];
    }
    return [...new Set([0, ...records.flatMap((r) => r.usage.map(price))])];
  }
  const one = perCallQuota(prices, call.priceName, call.ratio, call.units ?? 1);
  if (call.expectEnd) return [call.expectEnd === "success" ? one : 0];
  if (call.kind === "action") return call.answered ? [one] : [0, one];
  if (call.kind === "image") {
    if (call.answered) return [one * (call.images ?? 0)];
    return [...new Set([0, ...records.map((r) => one * r.images)])];
  }
  const delivered = records.map((r) => (r.task?.ends === "success" ? one : 0));
  // An answered task the upstream has no record of was refused or never sent: refunded, 0.
  if (call.answered) return delivered.length > 0 ? [...new Set(delivered)] : [0];
  return [...new Set([0, ...delivered])];
}

/** Most distinct sums kept per user before the recomputation falls back to a range. */
const MAX_SUMS = 200_000;

export interface Recomputation {
  userId: number;
  calls: number;
  /** Calls whose cost is one of several amounts (killed or cut). */
  open: number;
  /** What the balance moved by (initial - balance). */
  spent: number;
  /** The exact expectation when every call is determined; else the smallest and largest allowed. */
  low: number;
  high: number;
  /** `spent` is one of the sums the calls allow. */
  matches: boolean;
}

/** Each user's spend against the sums of what each of their calls may have cost. */
export function recomputeSpend(
  calls: ClientCall[],
  records: UsageRecord[],
  prices: RunPrices,
  spentByUser: Map<number, number>,
): Recomputation[] {
  const byTag = new Map<string, UsageRecord[]>();
  for (const r of records) {
    const tag = /#([\w.-]+)#/.exec(r.prompt)?.[1];
    if (tag) byTag.set(tag, [...(byTag.get(tag) ?? []), r]);
  }
  const out: Recomputation[] = [];
  for (const [userId, spent] of spentByUser) {
    const mine = calls.filter((c) => c.userId === userId);
    let sums: Set<number> | null = new Set([0]);
    let low = 0;
    let high = 0;
    let open = 0;
    let impossible = false;
    for (const call of mine) {
      const allowed = allowedAmounts(call, byTag.get(call.tag) ?? [], prices);
      if (allowed.length === 0) {
        impossible = true;
        continue;
      }
      if (allowed.length > 1) open += 1;
      low += Math.min(...allowed);
      high += Math.max(...allowed);
      if (sums) {
        const next = new Set<number>();
        for (const s of sums) for (const a of allowed) next.add(s + a);
        sums = next.size > MAX_SUMS ? null : next;
      }
    }
    const matches = !impossible && (sums ? sums.has(spent) : spent >= low && spent <= high);
    out.push({ userId, calls: mine.length, open, spent, low, high, matches });
  }
  return out;
}

/** A row of `charges`, as the closure check reads it. */
export interface ChargeRow {
  reference: string;
  instance: string;
  state: string;
  created_at: number;
  closed_at: number | null;
}

/** One SIGKILL of the run: which instance, when, and when it was serving again. */
export interface Kill {
  instance: string;
  killedAt: number;
  restartedAt: number;
}

export interface ClosureFigures {
  /** Charges a killed instance had open when it died. */
  leftOpen: number;
  /** Of those, closed by the end of the wait. */
  closed: number;
  /** Longest time from an instance's restart to the closing of a charge it left open (ms). */
  slowestMs: number;
  /** Charges open in the whole store at the end of the wait. */
  stillOpen: number;
  violations: string[];
}

/**
 * Every charge a killed instance left open is closed, each within `boundMs` of its instance's
 * restart, and nothing at all is open at the end.
 */
export function closureFigures(rows: ChargeRow[], kills: Kill[], boundMs: number): ClosureFigures {
  const violations: string[] = [];
  let leftOpen = 0;
  let closed = 0;
  let slowestMs = 0;
  for (const kill of kills) {
    for (const row of rows) {
      if (row.instance !== kill.instance || row.created_at > kill.killedAt) continue;
      if (row.closed_at !== null && row.closed_at <= kill.killedAt) continue;
      leftOpen += 1;
      if (row.state === "open" || row.closed_at === null) {
        violations.push(`${row.reference} (left open by the kill of ${kill.instance}) is still open`);
        continue;
      }
      closed += 1;
      const after = Math.max(0, row.closed_at - kill.restartedAt);
      slowestMs = Math.max(slowestMs, after);
      if (after > boundMs) {
        const opened = kill.killedAt - row.created_at;
        const down = kill.restartedAt - kill.killedAt;
        violations.push(
          `${row.reference} closed ${after} ms after ${kill.instance} restarted (bound ${boundMs} ms; ` +
            `opened ${opened} ms before the kill, restarted ${down} ms after it)`,
        );
      }
    }
  }
  const open = rows.filter((r) => r.state === "open");
  for (const row of open.slice(0, 20)) {
    if (!violations.some((v) => v.startsWith(row.reference))) violations.push(`${row.reference} is still open`);
  }
  return { leftOpen, closed, slowestMs, stillOpen: open.length, violations };
}

export interface BalanceRow {
  id: number;
  quota: number;
  credit_line: number;
}

/**
 * No balance below minus its credit line. Not a database constraint: the store enforces it with a
 * conditional update on each hold, so a path that forgot the condition would show here.
 */
export function creditLineFigures(users: BalanceRow[]): { below: number; inDebt: number; violations: string[] } {
  const violations: string[] = [];
  let inDebt = 0;
  for (const u of users) {
    if (u.quota < 0) inDebt += 1;
    if (u.quota < -u.credit_line) {
      violations.push(`user ${u.id}: balance ${u.quota} is below minus its credit line ${u.credit_line}`);
    }
  }
  return { below: violations.length, inDebt, violations };
}

/** One Idempotency-Key as the store keeps it, with the charges of every attempt of its run. */
export interface KeyCharges {
  key: string;
  attempts: number;
  /** The attempts' charges: `settled` (with the amount), `open` (held) or `refunded`. */
  charges: Array<{ reference: string; state: string; amount: number }>;
}

/** No Idempotency-Key charged twice: at most one attempt of a key keeps a charge. */
export function idempotencyFigures(keys: KeyCharges[]): {
  keys: number;
  retakenKeys: number;
  violations: string[];
} {
  const violations: string[] = [];
  for (const k of keys) {
    const kept = k.charges.filter((c) => c.state !== "refunded" && c.amount > 0);
    if (kept.length > 1) {
      violations.push(
        `Idempotency-Key ${k.key} charged ${kept.length} times (${kept.map((c) => c.reference).join(", ")})`,
      );
    }
  }
  return { keys: keys.length, retakenKeys: keys.filter((k) => k.attempts > 1).length, violations };
}
