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
 * The V8 flags the gateway sets for itself: none where the process was started with its own
 * `--heap-growing-percent` (an operator's choice wins).
 */
export function heapFlags(execArgv: readonly string[]): string[] {
  if (execArgv.some((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg))) return [];
  return [`--heap-growing-percent=${HEAP_GROWING_PERCENT}`];
}

/** Applies heapFlags to this process; called first by `serve`, before the gateway is built. */
export function applyHeapSettings(execArgv: readonly string[] = process.execArgv): string[] {
  const flags = heapFlags(execArgv);
  for (const flag of flags) v8.setFlagsFromString(flag);
  return flags;
}
