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

  it("builds a non-root image that starts with npm start and checks /healthz", () => {
    const dockerfile = read("Dockerfile");
    expect(dockerfile).toMatch(/^FROM node:20-bookworm-slim/m);
    expect(dockerfile).toMatch(/^RUN npm ci --omit=dev/m);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n.*\/healthz/m);
    expect(dockerfile).toMatch(/^CMD \["npm", "start"\]$/m);
    const pkg = JSON.parse(read("package.json")) as {
      scripts: Record<string, string>;
      dependencies: Record<string, string>;
    };
    // npm ci --omit=dev installs dependencies only: what `npm start` runs must be one.
    expect(pkg.scripts.start?.split(" ")[0]).toBe("tsx");
    expect(pkg.dependencies.tsx).toBeDefined();
    const ignored = read(".dockerignore").split("\n");
    for (const copied of [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap(
      (m) => m[1]?.split(" ") ?? [],
    )) {
      expect(existsSync(path.join(ROOT, copied)), copied).toBe(true);
      expect(ignored, copied).not.toContain(copied);
    }
  });
});
