import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { type TSchema, TypeGuard } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENV_OF_SETTING, FILE_ONLY_SETTINGS, loadConfigWithFile, SECRET_SETTINGS } from "../../src/config/file.js";
import { ConfigSchema, loadConfig } from "../../src/config/load.js";
import { type StoreKind, startTestGateway } from "../support/gateway.js";
import { createTestDatabase, HAS_PG } from "../support/postgres.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "mg-config-"));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function writeConfig(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

const GOOD_YAML = `
# A config file as an operator writes it.
host: 0.0.0.0
port: 8080
quotaPerUnit: 1000000
tasks:
  timeoutSeconds: 900
  enabledActions: [REPLACE]
limits:
  requestsPerMinute: 600
prices:
  - { kind: task, name: "audioa:MUSIC", price: 0.25 }
  - { kind: content, name: gemini-2.5-flash, input_per_million: 0.5, output_per_million: 3, cached_ratio: 0.2 }
groupRatios:
  vip: 0.8
channels:
  - name: sim-gemini
    type: gemini
    base_url: http://127.0.0.1:4000
    key_env: SIM_KEY
    models: [gemini-2.5-flash]
`;

/** The message of the ConfigError `load` throws. */
function failure(load: () => unknown): string {
  try {
    load();
  } catch (err) {
    expect((err as Error).name).toBe("ConfigError");
    return (err as Error).message;
  }
  throw new Error("the configuration was accepted");
}

describe("config file", () => {
  it("reads settings, prices, group ratios and channel seeds from YAML, with keys from the environment", () => {
    const file = writeConfig("good.yaml", GOOD_YAML);
    const config = loadConfigWithFile(file, { SIM_KEY: "sim-secret-key" });
    expect(config.host).toBe("0.0.0.0");
    expect(config.port).toBe(8080);
    expect(config.tasks.timeoutSeconds).toBe(900);
    expect(config.tasks.enabledActions).toEqual(["REPLACE"]);
    expect(config.tasks.pollIntervalMs).toBe(2000);
    expect(config.limits.requestsPerMinute).toBe(600);
    expect(config.prices).toHaveLength(2);
    expect(config.groupRatios).toEqual({ vip: 0.8 });
    expect(config.channels[0]).toMatchObject({ name: "sim-gemini", key: "sim-secret-key" });
  });

  it("reads the same settings from JSON", () => {
    const file = writeConfig(
      "good.json",
      JSON.stringify({ tasks: { timeoutSeconds: 60 }, groupRatios: { default: 1.5 }, dataDir: path.join(dir, "d") }),
    );
    const config = loadConfigWithFile(file, {});
    expect(config.tasks.timeoutSeconds).toBe(60);
    expect(config.groupRatios).toEqual({ default: 1.5 });
    expect(config.databaseUrl).toBe(`sqlite:${path.join(dir, "d", "gateway.sqlite")}`);
  });

  it("lets the environment win over the file, and flags win over both", () => {
    const file = writeConfig("ports.yaml", "port: 5000\nrole: worker\ntasks:\n  leaseMs: 5000\n");
    const config = loadConfigWithFile(file, { PORT: "4321", TASK_LEASE_MS: "9000" });
    expect(config.port).toBe(4321);
    expect(config.tasks.leaseMs).toBe(9000);
    expect(config.role).toBe("worker");
    expect(loadConfigWithFile(file, { PORT: "4321" }, { port: 1234, role: undefined }).port).toBe(1234);
  });

  it("names a setting of the wrong type, and the file it is in", () => {
    const file = writeConfig("type.yaml", "tasks:\n  timeoutSeconds: soon\n");
    const message = failure(() => loadConfigWithFile(file, {}));
    expect(message).toContain('invalid setting "tasks.timeoutSeconds"');
    expect(message).toContain(file);
  });

  it("names an unknown setting, at any depth", () => {
    const nested = writeConfig("unknown.yaml", "tasks:\n  timeoutSecs: 5\n");
    expect(failure(() => loadConfigWithFile(nested, {}))).toContain(
      'invalid setting "tasks.timeoutSecs": unknown setting',
    );
    const top = writeConfig("unknown-top.yaml", "prises: []\n");
    expect(failure(() => loadConfigWithFile(top, {}))).toContain('invalid setting "prises": unknown setting');
    const inChannel = writeConfig(
      "unknown-channel.yaml",
      "channels:\n  - {name: a, type: gemini, base_url: 'http://x', key_env: K, models: [m], colour: red}\n",
    );
    expect(failure(() => loadConfigWithFile(inChannel, { K: "k" }))).toContain('invalid setting "channels[0].colour"');
  });

  it("names a bad entry of a price list", () => {
    const file = writeConfig(
      "price.yaml",
      "prices:\n  - {kind: task, name: 'audioa:MUSIC', price: 0.1}\n  - {kind: task, name: x, price: -1}\n",
    );
    expect(failure(() => loadConfigWithFile(file, {}))).toContain('invalid setting "prices[1].price"');
  });

  it("refuses secrets in the file without repeating them", () => {
    const admin = writeConfig("secret.yaml", "adminKey: super-secret-admin-key-123\n");
    const message = failure(() => loadConfigWithFile(admin, {}));
    expect(message).toContain('invalid setting "adminKey"');
    expect(message).toContain("ADMIN_KEY");
    expect(message).not.toContain("super-secret-admin-key-123");

    const cookie = writeConfig(
      "cookie.yaml",
      "console:\n  passwordCost: 16\n  cookieSecret: a-cookie-secret-0123456789\n",
    );
    const cookieMessage = failure(() => loadConfigWithFile(cookie, {}));
    expect(cookieMessage).toContain('invalid setting "console.cookieSecret"');
    expect(cookieMessage).toContain("CONSOLE_COOKIE_SECRET");
    expect(cookieMessage).not.toContain("a-cookie-secret-0123456789");

    const channel = writeConfig(
      "channel-key.yaml",
      "channels:\n  - {name: a, type: gemini, base_url: 'http://x', key: sk-upstream-secret, models: [m]}\n",
    );
    const channelMessage = failure(() => loadConfigWithFile(channel, {}));
    expect(channelMessage).toContain('invalid setting "channels[0].key"');
    expect(channelMessage).not.toContain("sk-upstream-secret");
  });

  it("names the channel whose key variable is not set", () => {
    const file = writeConfig("good-no-env.yaml", GOOD_YAML);
    const message = failure(() => loadConfigWithFile(file, {}));
    expect(message).toContain('invalid setting "channels[0].key_env"');
    expect(message).toContain("SIM_KEY");
  });

  it("names duplicate channel names", () => {
    const file = writeConfig(
      "dup.yaml",
      "channels:\n  - {name: a, type: gemini, base_url: 'http://x', key_env: K, models: [m]}\n  - {name: a, type: gemini, base_url: 'http://y', key_env: K, models: [m]}\n",
    );
    expect(failure(() => loadConfigWithFile(file, { K: "k" }))).toContain('invalid setting "channels[1].name"');
  });

  it("says where a file that does not parse breaks", () => {
    const file = writeConfig("broken.yaml", "tasks:\n  timeoutSeconds: [1,\n");
    expect(failure(() => loadConfigWithFile(file, {}))).toMatch(/cannot parse config file .*broken\.yaml/);
    expect(failure(() => loadConfigWithFile(path.join(dir, "missing.yaml"), {}))).toContain("cannot read config file");
  });

  it("maps every setting to an environment variable, a secret, or the file alone", () => {
    const leaves: string[] = [];
    const walk = (schema: TSchema, prefix: string) => {
      if (!TypeGuard.IsObject(schema)) return void leaves.push(prefix);
      for (const [key, child] of Object.entries(schema.properties)) walk(child, prefix ? `${prefix}.${key}` : key);
    };
    walk(ConfigSchema, "");
    const covered = new Set([...Object.keys(ENV_OF_SETTING), ...Object.keys(SECRET_SETTINGS), ...FILE_ONLY_SETTINGS]);
    // A setting listed here needs its environment variable in ENV_OF_SETTING (src/config/settings.ts).
    expect(leaves.filter((l) => !covered.has(l))).toEqual([]);
  });
});

/** The schema of a dotted setting name (`tasks.leaseMs`). */
function schemaOf(setting: string): TSchema {
  return setting.split(".").reduce<TSchema>((schema, key) => {
    const child = TypeGuard.IsObject(schema) ? schema.properties[key] : undefined;
    if (!child) throw new Error(`no setting ${setting}`);
    return child;
  }, ConfigSchema);
}

/** The value of a dotted setting name in a configuration. */
function valueAt(tree: unknown, setting: string): unknown {
  return setting.split(".").reduce<any>((node, key) => node?.[key], tree);
}

/** Settings whose values obey rules beyond their schema's: a sample each rule accepts. */
const SAMPLES: Record<string, string[]> = {
  databaseUrl: ["postgres://probe@db.example:5432/gateway"],
  "blobs.url": ["s3://probe-bucket/one", "file:///srv/probe-blobs"],
  "blobs.downloads": ["redirect", "proxy"],
  "cors.origins": ["https://one.example", "http://localhost:5173"],
};

/**
 * Two values a setting accepts, as the environment writes them: the first differs from the
 * default, the second from the first.
 */
function samples(setting: string, fallback: unknown): string[] {
  if (SAMPLES[setting]) return SAMPLES[setting];
  const schema = schemaOf(setting);
  const branches = TypeGuard.IsUnion(schema) ? schema.anyOf : [schema];
  const integer = branches.find((b) => TypeGuard.IsInteger(b));
  if (integer && TypeGuard.IsInteger(integer)) {
    const base = typeof fallback === "number" ? fallback : (integer.minimum ?? 0);
    const up = base + 2 <= (integer.maximum ?? Number.MAX_SAFE_INTEGER);
    return (up ? [base + 1, base + 2] : [base - 1, base - 2]).map(String);
  }
  if (TypeGuard.IsBoolean(schema)) return [String(!fallback), String(fallback)];
  const literals = branches.filter((b) => TypeGuard.IsLiteral(b)).map((b) => String(b.const));
  if (literals.length === branches.length) return literals.filter((l) => l !== fallback);
  const text = branches.find((b) => TypeGuard.IsString(b));
  if (text && TypeGuard.IsString(text) && text.pattern?.startsWith("^https?")) {
    return ["https://one.example", "https://two.example"];
  }
  return ["probe-value-one-0123456789", "probe-value-two-0123456789"];
}

/** What `loadConfig` makes of an environment value of the setting. */
function loaded(setting: string, raw: string): unknown {
  const schema = schemaOf(setting);
  if (TypeGuard.IsArray(schema)) return [raw];
  if (TypeGuard.IsBoolean(schema)) return raw === "true";
  return /^-?\d+$/.test(raw) ? Number(raw) : raw;
}

describe("environment variables", () => {
  const defaults = loadConfig({});

  it("reads every setting's variable into that setting, secrets included", () => {
    for (const [setting, name] of Object.entries({ ...ENV_OF_SETTING, ...SECRET_SETTINGS })) {
      const [raw] = samples(setting, valueAt(defaults, setting)) as [string];
      const config = loadConfig({ [name]: raw });
      expect(valueAt(config, setting), `${name}=${raw}`).toEqual(loaded(setting, raw));
      expect(valueAt(config, setting), `${name}=${raw}`).not.toEqual(valueAt(defaults, setting));
    }
  });

  it("lets a setting's variable win over the same setting in the file", () => {
    for (const [setting, name] of Object.entries(ENV_OF_SETTING)) {
      const [fromEnv, fromFile] = samples(setting, valueAt(defaults, setting)) as [string, string];
      const tree: Record<string, unknown> = {};
      const keys = setting.split(".");
      const leaf = keys.slice(0, -1).reduce<Record<string, unknown>>((node, key) => {
        node[key] = {};
        return node[key] as Record<string, unknown>;
      }, tree);
      leaf[keys.at(-1)!] = loaded(setting, fromFile);
      const file = writeConfig(`env-wins-${name}.json`, JSON.stringify(tree));
      expect(valueAt(loadConfigWithFile(file, {}), setting), `${name} from the file`).toEqual(
        loaded(setting, fromFile),
      );
      expect(valueAt(loadConfigWithFile(file, { [name]: fromEnv }), setting), name).toEqual(loaded(setting, fromEnv));
    }
  });
});

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`configured prices, ratios and channels [${kind}]`, () => {
    it("writes them to the store at start, visible through the admin API, and seeds each channel once", async () => {
      const file = writeConfig(`apply-${kind}.yaml`, GOOD_YAML);
      const config = loadConfigWithFile(file, { SIM_KEY: "sim-secret-key" });
      const db = kind === "postgres" ? await createTestDatabase() : null;
      const databaseUrl = db?.url ?? `sqlite:${path.join(dir, `apply-${kind}.sqlite`)}`;
      const overrides = { prices: config.prices, groupRatios: config.groupRatios, channels: config.channels };
      try {
        const first = await startTestGateway(kind, overrides, { databaseUrl });
        try {
          const prices = await first.admin("GET", "/prices");
          expect(prices.body.data).toContainEqual(
            expect.objectContaining({ kind: "task", name: "audioa:MUSIC", price: 0.25 }),
          );
          expect(prices.body.data).toContainEqual(
            expect.objectContaining({
              kind: "content",
              name: "gemini-2.5-flash",
              input_per_million: 0.5,
              cached_ratio: 0.2,
            }),
          );
          // Prices the file does not name keep their defaults.
          expect(prices.body.data).toContainEqual(expect.objectContaining({ kind: "image", name: "image-model" }));
          expect((await first.admin("GET", "/group-ratios")).body.data).toContainEqual({ group: "vip", ratio: 0.8 });
          const channels = await first.admin("GET", "/channels");
          expect(channels.body.data).toHaveLength(1);
          expect(channels.body.data[0]).toMatchObject({
            name: "sim-gemini",
            type: "gemini",
            models: ["gemini-2.5-flash"],
          });
          expect(JSON.stringify(channels.body)).not.toContain("sim-secret-key");
          // An operator changes the price through the admin API in the meantime.
          expect((await first.admin("PUT", "/prices", { kind: "task", name: "audioa:MUSIC", price: 9 })).status).toBe(
            200,
          );
        } finally {
          await first.close();
        }

        const second = await startTestGateway(kind, overrides, { databaseUrl, keepStore: true });
        try {
          expect((await second.admin("GET", "/channels")).body.data).toHaveLength(1);
          const prices = await second.admin("GET", "/prices");
          // The file is the source of truth for the prices it names.
          expect(prices.body.data).toContainEqual(expect.objectContaining({ name: "audioa:MUSIC", price: 0.25 }));
        } finally {
          await second.close();
        }
      } finally {
        await db?.drop();
      }
    });
  });
}
