/**
 * CPU profiling of a child process over IPC, for a window of the run only (start-up and the
 * phases of other targets stay out of it): the parent sends `profile-start`, runs the load,
 * then sends `profile-stop` with a file name; the child (bench/gateway-entry.mjs) writes a V8
 * .cpuprofile there.
 */

import type { ChildProcess } from "node:child_process";

interface ProfileMessage {
  kind: "profile-start" | "profile-stop";
  file?: string;
}

/** Parent side: sends one profiler message and waits for the child's answer. */
export function profilerCommand(child: ChildProcess, kind: ProfileMessage["kind"], file?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`${kind}: no answer within 30 s`)), 30_000);
    const onMessage = (raw: unknown) => {
      const m = raw as { kind?: string; error?: string };
      if (m?.kind === `${kind}-done`) finish(m.error ? new Error(m.error) : null);
    };
    function finish(err: Error | null) {
      clearTimeout(timer);
      child.off("message", onMessage);
      if (err) reject(err);
      else resolve();
    }
    child.on("message", onMessage);
    child.send({ kind, file });
  });
}
