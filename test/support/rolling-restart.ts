import type { HaproxyProcess } from "./haproxy.js";

/** An instance behind the balancer, as a rolling restart handles it. */
export interface Restartable {
  /** Its server name in the balancer's configuration. */
  name: string;
  /** Sends it SIGTERM (by its PID); resolves with its exit code once it has exited. */
  stop(): Promise<number | null>;
  /** Starts it again at the same address; resolves once it answers /readyz with 200. */
  start(): Promise<void>;
}

/** What happened to one instance in the restart. */
export interface RestartRecord {
  name: string;
  exitCode: number | null;
  /** The balancer had taken the instance out (marked it DOWN) before the process exited. */
  takenOutBeforeExit: boolean;
  /** Milliseconds from the signal to the exit, and from the exit to the balancer's UP. */
  stopMs: number;
  backMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, what: string, timeoutMs: number) {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`never happened within ${timeoutMs} ms: ${what}`);
    await sleep(25);
  }
}

/**
 * Restarts each instance in turn, as an orchestrator's rolling update does: stop one (SIGTERM),
 * start it again, wait until the balancer has it back UP, then the next.
 */
export async function restartEach(
  instances: Restartable[],
  balancer: HaproxyProcess,
  timeoutMs = 60_000,
): Promise<RestartRecord[]> {
  const records: RestartRecord[] = [];
  for (const instance of instances) {
    const downs = balancer.transitions(instance.name, "DOWN");
    const ups = balancer.transitions(instance.name, "UP");
    const signalled = Date.now();
    const exitCode = await instance.stop();
    const exited = Date.now();
    const takenOutBeforeExit = balancer.transitions(instance.name, "DOWN") > downs;
    await instance.start();
    await until(
      () => balancer.transitions(instance.name, "UP") > ups,
      `the balancer marking ${instance.name} UP again`,
      timeoutMs,
    );
    records.push({
      name: instance.name,
      exitCode,
      takenOutBeforeExit,
      stopMs: exited - signalled,
      backMs: Date.now() - exited,
    });
  }
  return records;
}
