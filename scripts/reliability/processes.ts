import { type ChildProcess, spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The project's root folder (two levels above this file). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const CLI = path.join(ROOT, "bin", "media-gateway.mjs");

/** A child process of the run: the simulator or one gateway instance. */
export interface Child {
  name: string;
  port: number;
  url: string;
  proc: ChildProcess;
  /** Every line the child printed (stdout and stderr), for the secret scan and for diagnosis. */
  lines: string[];
  exited: Promise<number | null>;
}

/** A loopback port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Starts `media-gateway <args>` as a child process with extra environment. */
export function startChild(name: string, port: number, args: string[], env: Record<string, string> = {}): Child {
  const proc = spawn(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const collect = (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) if (line.trim() !== "") lines.push(line);
  };
  proc.stdout?.on("data", collect);
  proc.stderr?.on("data", collect);
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  return { name, port, url: `http://127.0.0.1:${port}`, proc, lines, exited };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `probe` answers true, the child exits, or `timeoutMs` passes (then throws). */
export async function waitReady(child: Child, probe: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let exited = false;
  void child.exited.then(() => {
    exited = true;
  });
  while (Date.now() < until) {
    if (exited) throw new Error(`${child.name} exited while starting:\n${child.lines.slice(-20).join("\n")}`);
    try {
      if (await probe()) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${child.name} was not ready within ${timeoutMs} ms:\n${child.lines.slice(-20).join("\n")}`);
}

/** True when the gateway at `url` answers /readyz with 200. */
export async function gatewayReady(url: string): Promise<boolean> {
  const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) });
  return res.status === 200;
}

/** Stops a child by its PID: SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
export async function stopChild(child: Child, graceMs = 10_000): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null || child.proc.pid === undefined) return;
  child.proc.kill("SIGTERM");
  const timer = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), graceMs).unref());
  if ((await Promise.race([child.exited, timer])) === "timeout") {
    child.proc.kill("SIGKILL");
    await child.exited;
  }
}

/** Kills a child at once (SIGKILL by PID), as a crash would, and waits until it is gone. */
export async function killChild(child: Child): Promise<void> {
  child.proc.kill("SIGKILL");
  await child.exited;
}
