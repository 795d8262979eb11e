import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { haproxyTimeMs, parseHaproxyConfig, renderHaproxyConfig } from "../ops/haproxy-cfg.js";

/** The `haproxy` program of this machine (Debian's package puts it in /usr/sbin), or null. */
export const HAPROXY: string | null =
  [...(process.env.PATH ?? "").split(path.delimiter), "/usr/sbin", "/usr/local/sbin"]
    .filter(Boolean)
    .map((dir) => path.join(dir, "haproxy"))
    .find((file) => {
      try {
        accessSync(file, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    }) ?? null;

/** Where the loopback copy of the configuration listens and finds its servers. */
export interface LoopbackLayout {
  /** The frontend's port on 127.0.0.1. */
  port: number;
  /**
   * Each server by name and the 127.0.0.1 port it is at here. A name the configuration does not
   * have is added to the backend of its servers, as an operator scaling out adds a `server` line.
   */
  servers: Record<string, number>;
  /** The health checks' interval (`inter`), shortened so that a test does not wait seconds. */
  checkInterval: string;
}

/**
 * A configuration made for containers (deploy/haproxy.cfg) run on loopback: the same settings,
 * with only the addresses and ports replaced, the check interval shortened, and Docker's DNS
 * resolvers (which do not exist here) left out.
 */
export function loopbackConfig(text: string, layout: LoopbackLayout): string {
  haproxyTimeMs(layout.checkInterval);
  const sections = parseHaproxyConfig(text).filter((s) => s.kind !== "resolvers");
  for (const section of sections) {
    section.lines = section.lines.map((line) => {
      const out: string[] = [];
      for (let i = 0; i < line.length; i++) {
        const word = line[i] as string;
        if (word === "resolvers") {
          i += 1;
          continue;
        }
        out.push(word);
        if (word === "inter" && (line[0] === "server" || line[0] === "default-server")) {
          out.push(layout.checkInterval);
          i += 1;
        }
      }
      if (out[0] === "bind") out[1] = `127.0.0.1:${layout.port}`;
      if (out[0] === "server") {
        const port = layout.servers[out[1] as string];
        if (port === undefined) throw new Error(`no loopback port for server ${out[1]}`);
        out[2] = `127.0.0.1:${port}`;
      }
      return out;
    });
  }
  const backend = sections.find((s) => s.lines.some((line) => line[0] === "server"));
  if (backend) {
    const named = new Set(backend.lines.filter((line) => line[0] === "server").map((line) => line[1]));
    for (const [name, port] of Object.entries(layout.servers)) {
      if (!named.has(name)) backend.lines.push(["server", name, `127.0.0.1:${port}`]);
    }
  }
  return renderHaproxyConfig(sections);
}

/** A running `haproxy` process in the foreground, with every line it printed. */
export interface HaproxyProcess {
  url: string;
  proc: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
  /** Lines saying that server `name` went UP (or DOWN), so far. */
  transitions(name: string, state: "UP" | "DOWN"): number;
  /** SIGTERM by its PID, then SIGKILL if it has not exited within 5 s. */
  stop(): Promise<void>;
}

/** Checks `config` with `haproxy -c`, then runs it in the foreground until it listens on `port`. */
export async function startHaproxy(config: string, dir: string, port: number): Promise<HaproxyProcess> {
  if (!HAPROXY) throw new Error("haproxy is not installed");
  const file = path.join(dir, "haproxy.cfg");
  writeFileSync(file, config);
  const check = spawn(HAPROXY, ["-c", "-q", "-f", file], { stdio: ["ignore", "pipe", "pipe"] });
  let checkOutput = "";
  check.stdout?.on("data", (c: Buffer) => (checkOutput += c));
  check.stderr?.on("data", (c: Buffer) => (checkOutput += c));
  const checked = await new Promise<number | null>((resolve) => check.on("exit", resolve));
  if (checked !== 0) throw new Error(`haproxy refuses the configuration:\n${checkOutput}\n${config}`);

  // -db: stay in the foreground, logs on stdout (the configuration's `log stdout`).
  const proc = spawn(HAPROXY, ["-db", "-f", file], { stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  // Its own alerts (a server going UP or DOWN) on stderr; the configuration's log on stdout.
  const alerts: string[] = [];
  const collect = (into: string[][]) => (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (line.trim() !== "") for (const list of into) list.push(line);
    }
  };
  proc.stdout?.on("data", collect([lines]));
  proc.stderr?.on("data", collect([lines, alerts]));
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const stop = async () => {
    if (gone || proc.pid === undefined) return;
    proc.kill("SIGTERM");
    const timer = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), 5000).unref());
    if ((await Promise.race([exited, timer])) === "timeout") {
      proc.kill("SIGKILL");
      await exited;
    }
  };
  const until = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (gone || Date.now() > until) {
      await stop();
      throw new Error(`haproxy did not listen on ${port}:\n${lines.join("\n")}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    proc,
    lines,
    exited,
    transitions: (name, state) => alerts.filter((l) => new RegExp(`Server \\S+/${name} is ${state}\\b`).test(l)).length,
    stop,
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
