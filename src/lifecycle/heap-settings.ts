import v8 from "node:v8";

/**
 * How much V8's old space may grow past its live size before the next full collection, in
 * percent. Left to itself V8 sets the first limit after start-up at about four times the start-up
 * heap and later ones by its own speed estimates, so a loaded gateway reached about 300 MiB of RSS
 * with 40 MiB of live data. At 100 the peak stays near 220 MiB at the same CPU per request; at 50
 * it stayed near 200 MiB but streams cost 6 to 12% more CPU (bench/findings.md, section 22).
 */
export const HEAP_GROWING_PERCENT = 100;

/**
 * The V8 settings the gateway makes for itself, each with the pattern of the flag an operator
 * would have started the process with to choose otherwise.
 *
 * Allocation-site pretenuring off: V8 makes the objects of a code site straight in the old space
 * once most of them survived a young collection, and keeps doing so. A gateway's first requests
 * run slowly (cold code, first statements) and outlive young collections, so sites of its
 * per-request objects got marked; from then on those objects of every request lived in the old
 * space, died only at a full collection, and until then kept the young objects they point to alive
 * through every young collection, which copied and promoted them: 1.5 MB promoted per young
 * collection under load (the bare relay: 0.3) and young pauses of 3 to 7 ms. Without it, 0.25 to
 * 0.5 MB and 1.3 to 2.7 ms, and 7 to 17% less CPU per request on Node 20, 15 to 24% on Node 24
 * (bench/findings.md, section 26).
 */
const SETTINGS: readonly { flag: string; chosen: RegExp }[] = [
  { flag: `--heap-growing-percent=${HEAP_GROWING_PERCENT}`, chosen: /^--heap[-_]growing[-_]percent(=|$)/ },
  { flag: "--no-allocation-site-pretenuring", chosen: /^--(no-?)?allocation[-_]site[-_]pretenuring(=|$)/ },
];

/**
 * The V8 flags the gateway sets for itself: each one unless the process was started with its own
 * setting of it (an operator's choice wins).
 */
export function heapFlags(execArgv: readonly string[]): string[] {
  return SETTINGS.filter(({ chosen }) => !execArgv.some((arg) => chosen.test(arg))).map(({ flag }) => flag);
}

/** Applies heapFlags to this process; called first by `serve`, before the gateway is built. */
export function applyHeapSettings(execArgv: readonly string[] = process.execArgv): string[] {
  const flags = heapFlags(execArgv);
  for (const flag of flags) v8.setFlagsFromString(flag);
  return flags;
}
