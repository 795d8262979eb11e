/**
 * Child processes of a benchmark run: each server (simulator, bare relay, gateway, peer) runs in
 * a process of its own so that its memory is its own. Every child is tracked by PID and stopped
 * at the end, on failure too, and killed outright if the benchmark itself exits early.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";

export interface ChildSpec {
  /** Short name for reports and errors. */
  name: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** stdout and stderr go to this file. */
  logFile: string;
  /** How the child shows it is ready: an IPC message with its URL, or an HTTP answer at `url`. */
  ready: { kind: "ipc" } | { kind: "http"; url: string };
  readyTimeoutMs?: number;
}

export interface RunningChild {
  name: string;
  pid: number;
  url: string;
  /** Extra fields of the child's ready message. */
  info: Record<string, unknown>;
  process: ChildProcess;
  logFile: string;
}

/** Resident memory of a process from /proc, in MiB: now and the peak since it started. */
export interface Memory {
  rssMiB: number;
  peakRssMiB: number;
}

/** Reads VmRSS and VmHWM of a live process (Linux); null where /proc is not available. */
export function memoryOf(pid: number): Memory | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = (field: string) =>
      Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(status)?.[1] ?? Number.NaN);
    return { rssMiB: kib("VmRSS") / 1024, peakRssMiB: kib("VmHWM") / 1024 };
  } catch {
    return null;
  }
}

/**
 * The machine's CPU time so far, in clock ticks over every CPU, and the part of it stolen (time a
 * virtual CPU was ready to run while the hypervisor ran something else), from /proc/stat's first
 * line; null where /proc is not available.
 */
export function machineCpuTicks(): { total: number; steal: number } | null {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "";
    if (!line.startsWith("cpu ")) return null;
    // user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is in user already.
    const fields = line.trim().split(/\s+/).slice(1, 9).map(Number);
    if (fields.length < 8 || fields.some((n) => !Number.isFinite(n))) return null;
    return { total: fields.reduce((a, b) => a + b, 0), steal: fields[7] as number };
  } catch {
    return null;
  }
}

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ: 100 on every Linux this runs on). */
const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a live process has used since it started; null where /proc is not available. */
export function cpuSecondsOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces: count the fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const user = Number(fields[11]);
    const system = Number(fields[12]);
    return Number.isFinite(user) && Number.isFinite(system) ? (user + system) / TICKS_PER_SECOND : null;
  } catch {
    return null;
  }
}

/** A free TCP port on 127.0.0.1 (for a child that must be told its port). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as net.AddressInfo;
      server.close(() => resolve(address.port));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

/** The set of children of one run; `stopAll` ends each one by its PID. */
export class ChildProcesses {
  private readonly running = new Map<number, RunningChild>();
  private readonly killOnExit = () => {
    for (const pid of this.running.keys()) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  };

  constructor() {
    process.once("exit", this.killOnExit);
  }

  /** Starts a child and waits until it is ready; a child that fails to start is stopped and reported. */
  async start(spec: ChildSpec): Promise<RunningChild> {
    const log = openSync(spec.logFile, "a");
    const child = spawn(process.execPath, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ["ignore", log, log, "ipc"],
    });
    closeSync(log);
    if (child.pid === undefined) throw new Error(`${spec.name}: could not be started`);
    const pid = child.pid;
    const entry: RunningChild = { name: spec.name, pid, url: "", info: {}, process: child, logFile: spec.logFile };
    this.running.set(pid, entry);
    child.once("exit", () => this.running.delete(pid));
    try {
      const ready = await this.waitReady(spec, child);
      entry.url = ready.url;
      entry.info = ready.info;
      return entry;
    } catch (err) {
      await this.stop(entry);
      throw new Error(`${spec.name}: ${(err as Error).message}\n--- last lines of its log ---\n${tail(spec.logFile)}`);
    }
  }

  private waitReady(spec: ChildSpec, child: ChildProcess): Promise<{ url: string; info: Record<string, unknown> }> {
    const timeoutMs = spec.readyTimeoutMs ?? 60_000;
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (err: Error | null, value?: { url: string; info: Record<string, unknown> }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        child.off("message", onMessage);
        child.off("exit", onExit);
        if (err) reject(err);
        else resolve(value!);
      };
      const timer = setTimeout(() => finish(new Error(`not ready within ${timeoutMs} ms`)), timeoutMs);
      const onExit = (code: number | null, signal: string | null) =>
        finish(new Error(`exited before it was ready (code ${code}, signal ${signal})`));
      const onMessage = (message: unknown) => {
        const m = message as { ready?: boolean; url?: string };
        if (m?.ready && typeof m.url === "string") {
          const { ready: _ready, url, ...info } = m as Record<string, unknown>;
          finish(null, { url: url as string, info });
        }
      };
      child.on("exit", onExit);
      if (spec.ready.kind === "ipc") {
        child.on("message", onMessage);
        return;
      }
      const url = spec.ready.url;
      void (async () => {
        while (!settled) {
          try {
            await fetch(url, { signal: AbortSignal.timeout(1000) });
            finish(null, { url, info: {} });
            return;
          } catch {
            await sleep(200);
          }
        }
      })();
    });
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  async stop(entry: RunningChild, graceMs = 8000): Promise<void> {
    const child = entry.process;
    if (child.exitCode !== null || child.signalCode !== null) {
      this.running.delete(entry.pid);
      return;
    }
    const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    try {
      process.kill(entry.pid, "SIGTERM");
    } catch {
      // already gone
    }
    const killed = await Promise.race([gone.then(() => true), sleep(graceMs).then(() => false)]);
    if (!killed) {
      try {
        process.kill(entry.pid, "SIGKILL");
      } catch {
        // already gone
      }
      await gone;
    }
    this.running.delete(entry.pid);
  }

  /** Stops every child still running, each by its PID. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.running.values()].map((entry) => this.stop(entry)));
    process.off("exit", this.killOnExit);
  }
}

/** Starts the minimal upstream (`bench/minimal-upstream.ts` of the checkout at `root`) among `children`. */
export function startMinimalUpstream(children: ChildProcesses, root: string, logFile: string): Promise<RunningChild> {
  return children.start({
    name: "minimal upstream",
    args: ["--import", "tsx", path.join(root, "bench/minimal-upstream.ts")],
    cwd: root,
    env: { ...process.env },
    logFile,
    ready: { kind: "ipc" },
  });
}
