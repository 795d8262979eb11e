import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { loadConfig } from "../../src/config.js";
import { loadConfigWithFile } from "../../src/config-file.js";

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

/** The environment a container of `service` gets: its env_file variables, then `environment`. */
function containerEnv(service: Service, dotEnvText: string): Record<string, string> {
  const dotEnv = parseEnvFile(dotEnvText);
  const files = service.env_file === undefined ? [] : [service.env_file].flat();
  const env: Record<string, string> = {};
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

/** Container images cannot be built here; these checks hold the files to what the code expects. */
describe("compose.yaml", () => {
  const compose = parseYaml(read("compose.yaml"), { merge: true }) as Compose;
  const gateways = Object.keys(compose.services).filter((name) => name.startsWith("gateway-"));
  const dotEnv = "ADMIN_KEY=an-admin-key-of-forty-eight-characters-0123456789\nGEMINI_KEY=gemini-secret-key\n";
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "mg-compose-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("starts two gateways whose channel keys from .env reach them, with the example channel switched on", () => {
    expect(gateways).toEqual(["gateway-1", "gateway-2"]);
    const file = configWithExamples(dir);
    expect(read("deploy/config.yaml")).toContain("key_env: GEMINI_KEY");
    for (const name of gateways) {
      const service = compose.services[name] as Service;
      expect(service.volumes).toContain("./deploy/config.yaml:/etc/media-gateway/config.yaml:ro");
      const env = containerEnv(service, dotEnv);
      expect(env.CONFIG_FILE).toBe("/etc/media-gateway/config.yaml");
      const config = loadConfigWithFile(file, env);
      expect(config.channels.map((c) => [c.name, c.key])).toEqual([["gemini-main", "gemini-secret-key"]]);
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
    expect(read("deploy/haproxy.cfg")).toMatch(/^\s*option forwardfor/m);
    expect(compose.services.lb?.ports).toEqual(["8080:8080"]);
  });

  it("checks the gateways on /readyz and starts the balancer once they are ready", () => {
    for (const name of gateways) {
      const service = compose.services[name] as Service;
      expect([service.healthcheck?.test].flat().join(" ")).toContain("/readyz");
      expect(service.depends_on).toMatchObject({
        postgres: { condition: "service_healthy" },
        redis: { condition: "service_healthy" },
      });
      // compose waits stop_grace_period before a SIGKILL: it must outlast the drain window.
      const env = containerEnv(service, dotEnv);
      expect(Number.parseInt(service.stop_grace_period ?? "10s", 10) * 1000).toBeGreaterThan(
        Number(env.SHUTDOWN_GRACE_MS),
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

  it("balances every gateway, checked on /readyz", () => {
    const haproxy = read("deploy/haproxy.cfg");
    for (const name of gateways) expect(haproxy).toMatch(new RegExp(`^\\s*server ${name} ${name}:3000`, "m"));
    expect(haproxy).toContain("uri /readyz");
    expect(compose.services.lb?.volumes).toContain("./deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro");
  });

  it("builds a multi-stage Node 24 image that runs the compiled gateway with node as PID 1", () => {
    const dockerfile = read("Dockerfile");
    const stages = [...dockerfile.matchAll(/^FROM (\S+)(?: AS (\S+))?$/gm)].map((m) => ({ image: m[1], name: m[2] }));
    expect(stages.map((s) => s.image)).toEqual(["node:24-slim", "node:24-slim", "node:24-slim"]);
    const final = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));
    // The runtime stage takes production dependencies and compiled code only, and runs as non-root.
    expect(final).toMatch(/^COPY --from=deps \/app\/node_modules/m);
    expect(final).toMatch(/^COPY --from=build \/app\/dist/m);
    expect(final).not.toMatch(/^COPY src/m);
    expect(dockerfile).toMatch(/^RUN npm ci --omit=dev/m);
    expect(dockerfile).toMatch(/rm -rf dist\/simulator/);
    expect(final).toMatch(/^USER node$/m);
    expect(final).toMatch(/^HEALTHCHECK .*\n.*\/readyz/m);
    expect(final).toMatch(/^CMD \["node", "dist\/main.js", "serve"\]$/m);
    const pkg = JSON.parse(read("package.json")) as {
      scripts: Record<string, string>;
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
      engines: Record<string, string>;
    };
    expect(pkg.scripts.start).toBe("node dist/main.js serve");
    expect(pkg.dependencies.tsx).toBeUndefined();
    expect(pkg.devDependencies.tsx).toBeDefined();
    expect(pkg.engines.node).toBe(">=20.19");
    expect(read(".nvmrc").trim()).toBe("24");
    const ignored = read(".dockerignore").split("\n");
    for (const copied of [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap(
      (m) => m[1]?.split(" ") ?? [],
    )) {
      expect(existsSync(path.join(ROOT, copied)), copied).toBe(true);
      expect(ignored, copied).not.toContain(copied);
    }
  });
});
