import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { loadConfigWithFile } from "../../src/config-file.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");

type Service = {
  environment?: Record<string, string>;
  volumes?: string[];
  depends_on?: Record<string, unknown> | string[];
  ports?: string[];
};

/** Container images cannot be built here; these checks keep the files consistent with the code. */
describe("container files", () => {
  const compose = parseYaml(read("compose.yaml"), { merge: true }) as { services: Record<string, Service> };
  const gateways = Object.keys(compose.services).filter((name) => name.startsWith("gateway-"));

  it("runs two gateways on PostgreSQL and Redis with the shipped config file", () => {
    expect(gateways).toEqual(["gateway-1", "gateway-2"]);
    for (const name of gateways) {
      const env = compose.services[name]?.environment ?? {};
      expect(env.DATABASE_URL).toMatch(/^postgres:\/\/.+@postgres:5432\//);
      expect(env.REDIS_URL).toBe("redis://redis:6379");
      expect(env.CONFIG_FILE).toBe("/etc/media-gateway/config.yaml");
      expect(compose.services[name]?.volumes).toContain("./deploy/config.yaml:/etc/media-gateway/config.yaml:ro");
    }
    const config = loadConfigWithFile(path.join(ROOT, "deploy/config.yaml"), {
      DATABASE_URL: "postgres://gateway:gateway@postgres:5432/gateway",
    });
    expect(config.tasks.timeoutSeconds).toBeGreaterThan(0);
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
