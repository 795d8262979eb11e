import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { loadConfigWithFile } from "../../src/config/file.js";
import { loadConfig } from "../../src/config/load.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAPROXY } from "../support/haproxy.js";
import { envOf, parseDockerfile } from "./dockerfile.js";
import { argumentOf, haproxyTimeMs, linesStarting, parseHaproxyConfig, sectionOf } from "./haproxy-cfg.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");

type Service = {
  env_file?: string | (string | { path: string })[];
  environment?: Record<string, string>;
  volumes?: string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  healthcheck?: { test?: string[] | string };
  stop_grace_period?: string;
  ports?: string[];
};
type Compose = { services: Record<string, Service>; volumes?: Record<string, unknown> };

/** `KEY=value` lines, as compose reads an env_file. */
function parseEnvFile(text: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (m?.[1]) vars[m[1]] = (m[2] ?? "").trim();
  }
  return vars;
}

/** Compose's `${VAR}`, `${VAR:-default}` and `${VAR:?message}`, filled from the project's .env. */
function interpolate(value: string, dotEnv: Record<string, string>): string {
  return value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-?])([^}]*))?\}/g,
    (_, name: string, op?: string, arg?: string) => {
      const set = dotEnv[name];
      if (set) return set;
      if (op === "?") throw new Error(`compose refuses to start: ${arg}`);
      return op === "-" ? (arg ?? "") : "";
    },
  );
}

/** The ENV of the image compose builds (`build: .`, the Dockerfile's last stage). */
const IMAGE_ENV = envOf(parseDockerfile(read("Dockerfile")).at(-1)!);

/**
 * The environment a container of `service` gets: the image's ENV, its env_file variables, then
 * `environment`.
 */
function containerEnv(service: Service, dotEnvText: string): Record<string, string> {
  const dotEnv = parseEnvFile(dotEnvText);
  const files = service.env_file === undefined ? [] : [service.env_file].flat();
  const env: Record<string, string> = { ...IMAGE_ENV };
  for (const file of files) {
    const name = typeof file === "string" ? file : file.path;
    // The only env_file of this project is the .env beside compose.yaml.
    expect(name).toBe(".env");
    Object.assign(env, dotEnv);
  }
  for (const [key, value] of Object.entries(service.environment ?? {})) env[key] = interpolate(String(value), dotEnv);
  return env;
}

/** deploy/config.yaml with its commented examples (prices, group ratios, a channel) switched on. */
function configWithExamples(dir: string): string {
  const text = read("deploy/config.yaml")
    .split("\n")
    .map((line) => line.replace(/^# (?=(prices|groupRatios|channels|\s))/, ""))
    .join("\n");
  const file = path.join(dir, "config.yaml");
  writeFileSync(file, text);
  return file;
}

/**
 * Runs a compose healthcheck `test` in a stand-in for the container's network: a fetch to a
 * loopback port of the container goes to the port of this machine that `ports` maps it to, and
 * fails like a closed port for any other.
 */
async function runHealthcheck(test: string[] | string | undefined, ports: Record<string, number>, dir: string) {
  const [form, ...command] = [test ?? []].flat();
  if (form !== "CMD" || command[0] !== "node") throw new Error(`not a node exec-form healthcheck: ${test}`);
  const preload = path.join(dir, "container-network.mjs");
  writeFileSync(
    preload,
    `const ports = ${JSON.stringify(ports)};
const realFetch = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (url.hostname === "127.0.0.1" || url.hostname === "localhost") {
    const to = ports[url.port || "80"];
    if (to === undefined) return Promise.reject(new TypeError("fetch failed: connection refused"));
    url.hostname = "127.0.0.1";
    url.port = String(to);
  }
  return realFetch(url, init);
};
`,
  );
  const child = spawn(process.execPath, command.slice(1), {
    env: { PATH: process.env.PATH ?? "", NODE_OPTIONS: `--import=${pathToFileURL(preload).href}` },
    stdio: "ignore",
  });
  return new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
}

/**
 * Containers cannot be started here. These tests load each gateway's configuration from the
 * environment compose would give it, and run the health checks of compose and HAProxy against a
 * real gateway.
 */
describe("compose.yaml", () => {
  const compose = parseYaml(read("compose.yaml"), { merge: true }) as Compose;
  const haproxy = parseHaproxyConfig(read("deploy/haproxy.cfg"));
  const gateways = Object.keys(compose.services).filter((name) => name.startsWith("gateway-"));
  const dotEnv = "ADMIN_KEY=an-admin-key-of-forty-eight-characters-0123456789\nGEMINI_KEY=gemini-secret-key\n";
  let dir: string;
  /** A ready gateway, for the health checks of compose and HAProxy to ask. */
  let gw: TestGateway;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "mg-compose-"));
    gw = await startTestGateway("sqlite", { logLevel: "silent" });
  });
  afterAll(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("starts two gateways whose channel keys from .env reach them, with the example channel switched on", () => {
    expect(gateways).toEqual(["gateway-1", "gateway-2"]);
    const file = configWithExamples(dir);
    for (const name of gateways) {
      const service = compose.services[name] as Service;
      expect(service.volumes).toContain("./deploy/config.yaml:/etc/media-gateway/config.yaml:ro");
      const env = containerEnv(service, dotEnv);
      expect(env.CONFIG_FILE).toBe("/etc/media-gateway/config.yaml");
      const config = loadConfigWithFile(file, env);
      expect(config.channels.map((c) => [c.name, c.key_env, c.key])).toEqual([
        ["gemini-main", "GEMINI_KEY", "gemini-secret-key"],
      ]);
      expect(config.databaseUrl).toMatch(/^postgres:\/\/gateway:.+@postgres:5432\/gateway$/);
      expect(config.redisUrl).toBe("redis://redis:6379");
      expect(config.adminKey).toBe("an-admin-key-of-forty-eight-characters-0123456789");
    }
  });

  it("would restart in a loop without env_file: the channel's key would be missing", () => {
    const file = configWithExamples(dir);
    const service = { ...(compose.services["gateway-1"] as Service), env_file: undefined };
    expect(() => loadConfigWithFile(file, containerEnv(service, dotEnv))).toThrow(/GEMINI_KEY is not set/);
  });

  it("trusts exactly one proxy hop, HAProxy's", () => {
    for (const name of gateways) {
      const env = containerEnv(compose.services[name] as Service, dotEnv);
      expect(env.TRUST_PROXY).toBe("1");
      expect(loadConfig({ ...env, DATABASE_URL: "postgres://x@postgres/x" }).trustProxy).toBe(1);
    }
    // The one hop: the balancer appends the client's address to X-Forwarded-For.
    const frontend = sectionOf(haproxy, "frontend", "http");
    const forwards = [sectionOf(haproxy, "defaults"), frontend].some(
      (section) => linesStarting(section, "option", "forwardfor").length > 0,
    );
    expect(forwards).toBe(true);
    // Clients reach the balancer on the port compose publishes.
    const published = (compose.services.lb?.ports ?? []).map((p) => p.split(":").at(-1));
    expect(linesStarting(frontend, "bind").map((l) => l[1]?.split(":").at(-1))).toEqual(published);
  });

  it("starts the balancer once the gateways are healthy, and lets a stop outlast the readiness delay and the drain window", () => {
    for (const name of gateways) {
      const service = compose.services[name] as Service;
      expect(service.depends_on).toMatchObject({
        postgres: { condition: "service_healthy" },
        redis: { condition: "service_healthy" },
      });
      // compose waits stop_grace_period before a SIGKILL: it must outlast the delay and the drain window.
      const config = loadConfig(containerEnv(service, dotEnv));
      expect(Number.parseInt(service.stop_grace_period ?? "10s", 10) * 1000).toBeGreaterThan(
        config.shutdownDelayMs + config.shutdownGraceMs,
      );
    }
    expect(compose.services.lb?.depends_on).toEqual({
      "gateway-1": { condition: "service_healthy" },
      "gateway-2": { condition: "service_healthy" },
    });
  });

  it("keeps PostgreSQL, Redis and the gateways' data on named volumes", () => {
    const named = Object.keys(compose.volumes ?? {});
    const mounted = (service: string) =>
      (compose.services[service]?.volumes ?? []).map((v) => v.split(":")[0]).filter((v) => named.includes(v ?? ""));
    expect(mounted("postgres")).toEqual(["pgdata"]);
    expect(mounted("redis")).toEqual(["redisdata"]);
    expect(mounted("gateway-1")).toEqual(["data"]);
    expect(compose.services.postgres?.healthcheck).toBeDefined();
    expect(compose.services.redis?.healthcheck).toBeDefined();
  });

  it("marks a gateway healthy when it is ready, and unhealthy when it does not answer", async () => {
    const gatewayPort = Number(new URL(gw.url).port);
    for (const name of gateways) {
      const service = compose.services[name] as Service;
      const listens = loadConfig(containerEnv(service, dotEnv)).port;
      expect(await runHealthcheck(service.healthcheck?.test, { [listens]: gatewayPort }, dir), name).toBe(0);
      expect(await runHealthcheck(service.healthcheck?.test, {}, dir), name).toBe(1);
    }
  });

  it("has the balancer check what a ready gateway answers as healthy", async () => {
    const backend = sectionOf(haproxy, "backend", "gateways");
    expect(linesStarting(backend, "option", "httpchk")).toHaveLength(1);
    const send = linesStarting(backend, "http-check", "send")[0] ?? [];
    const method = send[send.indexOf("meth") + 1];
    const uri = send[send.indexOf("uri") + 1];
    const expectLine = linesStarting(backend, "http-check", "expect", "status")[0] ?? [];
    const res = await fetch(`${gw.url}${uri}`, { method });
    expect(res.status).toBe(Number(expectLine[3]));
  });

  it("takes a stopping gateway out before its listener closes, and retries a refused connection on the other one", () => {
    const defaults = sectionOf(haproxy, "defaults");
    const backend = sectionOf(haproxy, "backend", "gateways");
    const checks = [...linesStarting(defaults, "default-server"), ...linesStarting(backend, "server")];
    const setting = (word: string) => checks.map((line) => argumentOf(line, word)).findLast((v) => v !== undefined);
    // Checks fail for `fall` intervals in a row before the instance is out of rotation.
    const takenOutMs = haproxyTimeMs(setting("inter") ?? "2s") * Number(setting("fall") ?? 3);
    for (const name of gateways) {
      const config = loadConfig(containerEnv(compose.services[name] as Service, dotEnv));
      expect(config.shutdownDelayMs, name).toBeGreaterThanOrEqual(takenOutMs + 2000);
    }
    // A refused connection is tried again on the other gateway (redispatched on every retry).
    expect(Number(linesStarting(defaults, "retries")[0]?.[1])).toBeGreaterThanOrEqual(1);
    expect(linesStarting(defaults, "option", "redispatch")[0]?.[2] ?? "-1").toBe("1");
    const retryOn = linesStarting(defaults, "retry-on")[0]?.slice(1) ?? ["conn-failure"];
    expect(retryOn).toContain("conn-failure");
    // Anything beyond a connection failure may have reached a gateway: retried only for reads.
    if (retryOn.some((r) => r !== "conn-failure")) {
      expect(linesStarting(backend, "http-request", "disable-l7-retry")).toEqual([
        ["http-request", "disable-l7-retry", "unless", "METH_GET"],
      ]);
    }
  });

  it.skipIf(!HAPROXY)("is a configuration HAProxy accepts", async () => {
    const check = spawn(HAPROXY as string, ["-c", "-f", path.join(ROOT, "deploy/haproxy.cfg")], { stdio: "pipe" });
    let output = "";
    check.stdout?.on("data", (c: Buffer) => (output += c));
    check.stderr?.on("data", (c: Buffer) => (output += c));
    expect(await new Promise((resolve) => check.on("exit", resolve)), output).toBe(0);
    expect(output).toContain("Configuration file is valid");
  });

  it("balances every gateway at the port its container listens on", () => {
    const frontend = sectionOf(haproxy, "frontend", "http");
    const backend = sectionOf(haproxy, "backend", linesStarting(frontend, "default_backend")[0]?.[1] ?? null);
    const servers = linesStarting(backend, "server").map(([, name, address]) => [name, address]);
    expect(servers).toEqual(
      gateways.map((name) => {
        const port = loadConfig(containerEnv(compose.services[name] as Service, dotEnv)).port;
        return [name, `${name}:${port}`];
      }),
    );
    expect(compose.services.lb?.volumes).toContain("./deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro");
  });
});
