import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { commandsOf, envOf, execForm, instructionsOf, parseDockerfile, type Stage } from "./dockerfile.js";

/**
 * Container images cannot be built here. These tests put together the tree the Dockerfile's last
 * stage holds (what its COPY instructions take from the build and deps stages, minus what the
 * build stage removes), from this checkout's compiled dist/, and run the image's own commands in
 * it: CMD, HEALTHCHECK and STOPSIGNAL.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");
const stages = parseDockerfile(read("Dockerfile"));
const runtime = stages.at(-1) as Stage;
const ADMIN_KEY = "container-image-admin-key-0123456789";

const stageNamed = (name: string) => stages.find((s) => s.name === name) as Stage;
const workdirOf = (stage: Stage) => instructionsOf(stage, "WORKDIR").at(-1)?.args ?? "/";
/** `node` in an image's command is the node running the tests. */
const program = (command: string[]) => (command[0] === "node" ? process.execPath : (command[0] as string));

/** The image's tree in `app`: each COPY of the runtime stage, from this checkout. */
function assembleImage(app: string): void {
  for (const copy of instructionsOf(runtime, "COPY")) {
    const words = copy.args.split(/\s+/);
    const to = words.at(-1) as string;
    for (const from of words.slice(0, -1)) {
      const source = copy.flags.from
        ? path.join(ROOT, path.relative(workdirOf(stageNamed(copy.flags.from)), from))
        : path.join(ROOT, from);
      // `COPY a b ./` puts a and b into the folder; `COPY dir ./dir` makes dir the folder.
      const target = to.endsWith("/") ? path.join(app, to, path.basename(from)) : path.join(app, to);
      mkdirSync(path.dirname(target), { recursive: true });
      // The deps stage installs the production dependencies into node_modules: the checkout's serve.
      if (path.basename(source) === "node_modules") symlinkSync(source, target, "dir");
      else cpSync(source, target, { recursive: true });
    }
    if (!copy.flags.from) continue;
    // What the build stage removes after compiling never reaches the image.
    for (const command of commandsOf(stageNamed(copy.flags.from))) {
      if (command[0] !== "rm") continue;
      for (const removed of command.slice(1).filter((w) => !w.startsWith("-"))) {
        rmSync(path.join(app, removed), { recursive: true, force: true });
      }
    }
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Runs a command of the image to its end: exit code and output. */
function runToEnd(command: string[], cwd: string, env: Record<string, string>) {
  const child = spawn(program(command), command.slice(1), { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output += c));
  child.stderr.on("data", (c: Buffer) => (output += c));
  return new Promise<{ code: number | null; output: string }>((resolve) =>
    child.on("exit", (code) => resolve({ code, output })),
  );
}

/** Seconds of a Docker duration (`30s`, `1m`). */
function seconds(duration: string | undefined): number {
  const m = /^(\d+)(s|m)$/.exec(duration ?? "");
  if (!m) throw new Error(`not a duration: ${duration}`);
  return Number(m[1]) * (m[2] === "m" ? 60 : 1);
}

describe("the container image", () => {
  let dir: string;
  let app: string;
  let env: Record<string, string>;
  let gateway: ChildProcess | null = null;
  let logs = "";

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "mg-image-"));
    app = path.join(dir, "app");
    assembleImage(app);
    const imageEnv = envOf(runtime);
    // What `docker run -p ... -v mg-data:/data -e ADMIN_KEY=...` gives the container, with the
    // volume at a folder of this machine and the port one that is free here.
    env = {
      PATH: process.env.PATH ?? "",
      ...imageEnv,
      DATA_DIR: path.join(dir, "data"),
      PORT: String(await freePort()),
      ADMIN_KEY,
    };
    mkdirSync(env.DATA_DIR as string);
  });
  afterAll(() => {
    gateway?.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs on the Node line the project pins, in every stage", () => {
    const pinned = read(".nvmrc").trim();
    expect(stages.map((s) => s.image)).toEqual(stages.map(() => `node:${pinned}-slim`));
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const pkg = JSON.parse(read("package.json")) as { engines: Record<string, string> };
    // The pinned line is one the package declares it runs on (the oldest supported is 20.19).
    expect(pkg.engines.node).toBe(">=20.19");
    expect(Number(pinned)).toBeGreaterThanOrEqual(20);
  });

  it("ships compiled code and production dependencies only: no sources, no simulator, no demo", () => {
    const copied = instructionsOf(runtime, "COPY").map((c) => c.args.split(/\s+/)[0]);
    expect(copied).not.toContain("src");
    expect(existsSync(path.join(app, "dist", "main.js"))).toBe(true);
    expect(existsSync(path.join(app, "src"))).toBe(false);
    expect(existsSync(path.join(app, "dist", "simulator"))).toBe(false);
    expect(existsSync(path.join(app, "dist", "app", "demo.js"))).toBe(false);
    const deps = commandsOf(stageNamed("deps")).filter((c) => c[0] === "npm" && c[1] === "ci");
    expect(deps.length).toBeGreaterThan(0);
    for (const command of deps) expect(command).toContain("--omit=dev");
    const pkg = JSON.parse(read("package.json")) as { dependencies: Record<string, string> };
    // tsx (and any other dev tool) is not needed to run the image.
    expect(pkg.dependencies.tsx).toBeUndefined();
  });

  it("builds from files that exist and that .dockerignore lets through", () => {
    const ignored = read(".dockerignore")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "" && !l.startsWith("#"));
    const sources = stages.flatMap((stage) =>
      instructionsOf(stage, "COPY")
        .filter((c) => !c.flags.from)
        .flatMap((c) => c.args.split(/\s+/).slice(0, -1)),
    );
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(existsSync(path.join(ROOT, source)), source).toBe(true);
      expect(ignored, source).not.toContain(source);
    }
  });

  it("runs as the unprivileged node user, writing only to its data volume", () => {
    // A process that breaks out of the gateway cannot write to the image's code or the system.
    expect(instructionsOf(runtime, "USER").at(-1)?.args).toBe("node");
    const volumes = instructionsOf(runtime, "VOLUME").flatMap((v) => execForm(v.args));
    expect(volumes).toEqual([envOf(runtime).DATA_DIR]);
    expect(loadConfig(envOf(runtime)).dataDir).toBe(envOf(runtime).DATA_DIR);
  });

  it("exposes the port the gateway listens on", () => {
    const exposed = instructionsOf(runtime, "EXPOSE").map((e) => Number(e.args));
    expect(exposed).toEqual([loadConfig(envOf(runtime)).port]);
  });

  it("starts the gateway with its CMD, which npm start runs too, and is healthy within the start period", async () => {
    const cmd = execForm(instructionsOf(runtime, "CMD").at(-1)?.args ?? "");
    const pkg = JSON.parse(read("package.json")) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toBe(cmd.join(" "));
    // node itself is PID 1: no npm, no shell in between to swallow the stop signal.
    expect(cmd[0]).toBe("node");

    const healthcheck = instructionsOf(runtime, "HEALTHCHECK").at(-1);
    const check = execForm(healthcheck?.args.replace(/^CMD\s+/, "") ?? "");
    const started = Date.now();
    gateway = spawn(program(cmd), cmd.slice(1), { cwd: app, env, stdio: ["ignore", "pipe", "pipe"] });
    gateway.stdout?.on("data", (c: Buffer) => (logs += c));
    gateway.stderr?.on("data", (c: Buffer) => (logs += c));
    let result = await runToEnd(check, app, env);
    while (result.code !== 0 && Date.now() - started < seconds(healthcheck?.flags["start-period"]) * 1000) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      result = await runToEnd(check, app, env);
    }
    expect(result.code, `healthcheck: ${result.output}\ngateway: ${logs}`).toBe(0);
    const res = await fetch(`http://127.0.0.1:${env.PORT}/readyz`);
    expect(res.status).toBe(200);
  }, 60_000);

  it("stops on its STOPSIGNAL with exit code 0, and is unhealthy once stopped", async () => {
    expect(gateway, "the gateway of the previous test").not.toBeNull();
    const child = gateway as ChildProcess;
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const signal = instructionsOf(runtime, "STOPSIGNAL").at(-1)?.args ?? "SIGTERM";
    child.kill(signal as NodeJS.Signals);
    expect(await exited, logs).toBe(0);
    gateway = null;
    const healthcheck = instructionsOf(runtime, "HEALTHCHECK").at(-1);
    const check = execForm(healthcheck?.args.replace(/^CMD\s+/, "") ?? "");
    expect((await runToEnd(check, app, env)).code).toBe(1);
  }, 60_000);
});
