/**
 * CPU profiling of a child process over IPC, for a window of the run only (start-up and the
 * phases of other targets stay out of it): the parent sends `profile-start`, runs the load,
 * then sends `profile-stop` with a file name; the child writes a V8 .cpuprofile there.
 */

import type { ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";

interface ProfileMessage {
  kind: "profile-start" | "profile-stop";
  file?: string;
}

/** Child side: answers profile-start / profile-stop messages from the parent. */
export function serveProfilerOverIpc(): void {
  let session: Session | null = null;
  process.on("message", (raw: unknown) => {
    const message = raw as ProfileMessage;
    if (message?.kind !== "profile-start" && message?.kind !== "profile-stop") return;
    void (async () => {
      try {
        if (message.kind === "profile-start") {
          session = new Session();
          session.connect();
          await session.post("Profiler.enable");
          await session.post("Profiler.setSamplingInterval", { interval: 500 });
          await session.post("Profiler.start");
        } else if (session) {
          const { profile } = await session.post("Profiler.stop");
          if (message.file) writeFileSync(message.file, JSON.stringify(profile));
          session.disconnect();
          session = null;
        }
        process.send?.({ kind: `${message.kind}-done` });
      } catch (err) {
        process.send?.({ kind: `${message.kind}-done`, error: (err as Error).message });
      }
    })();
  });
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
