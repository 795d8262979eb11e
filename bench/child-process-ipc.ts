/**
 * The child side of the benchmark's process protocol: a child announces where it listens over the
 * IPC channel, and stops cleanly on SIGTERM, SIGINT or when its parent goes away (so no process
 * outlives a benchmark run, even a failed one).
 */

/** What a child tells its parent once it accepts connections. */
export interface ReadyMessage {
  ready: true;
  url: string;
  [extra: string]: unknown;
}

/** Sends the ready message to the parent (or prints it when run by hand, without IPC). */
export function announceReady(message: { url: string; [extra: string]: unknown }): void {
  const full: ReadyMessage = { ready: true, ...message };
  if (process.send) process.send(full);
  else process.stdout.write(`${JSON.stringify(full)}\n`);
}

/** Runs `stop` once on SIGTERM, SIGINT or parent disconnect, then exits (a CPU profile is written then). */
export function stopOnSignal(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = () => {
    if (stopping) return;
    stopping = true;
    const timer = setTimeout(() => process.exit(1), 5000);
    timer.unref();
    stop().then(
      () => process.exit(0),
      (err) => {
        process.stderr.write(`stop failed: ${err?.stack ?? err}\n`);
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", handler);
  process.once("SIGINT", handler);
  process.once("disconnect", handler);
}
