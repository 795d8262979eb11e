import { Value, type ValueError } from "@sinclair/typebox/value";
import { blobLocation } from "./blobs.js";
import { defaultConfig } from "./defaults.js";
import { ConfigError, type Env } from "./error.js";
import { type ChannelSeed, type Config, ConfigSchema } from "./schema.js";
import { ENV_OF_SETTING, SECRET_SETTINGS } from "./settings.js";
import { badProxyEntry, TRUST_ALL_REFUSED } from "./trust-proxy.js";

export { defaultConfig } from "./defaults.js";
export { ConfigError } from "./error.js";
export { type ChannelSeed, type Config, ConfigSchema, type PriceSeed } from "./schema.js";

type DeepPartial<T> = {
  [K in keyof T]?: T[K] extends object ? (T[K] extends unknown[] ? T[K] : DeepPartial<T[K]>) : T[K];
};
export type ConfigOverrides = DeepPartial<Config>;

function merge<T>(base: T, over: DeepPartial<T> | undefined): T {
  if (!over) return base;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    const b = out[k];
    out[k] =
      v !== null && typeof v === "object" && !Array.isArray(v) && b !== null && typeof b === "object"
        ? merge(b, v as DeepPartial<typeof b>)
        : v;
  }
  return out as T;
}

/** `/tasks/timeoutSeconds` -> `tasks.timeoutSeconds`, `/channels/0/name` -> `channels[0].name`. */
export function settingName(pointer: string): string {
  return pointer
    .split("/")
    .filter(Boolean)
    .map((seg) => seg.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), "");
}

function channelKey(env: Env, channel: ChannelSeed, index: number): string {
  const name = channel.key_env;
  if (name === undefined) {
    throw new ConfigError(`invalid setting "channels[${index}].key_env": required (the variable holding the key)`);
  }
  const key = env[name];
  if (!key)
    throw new ConfigError(`invalid setting "channels[${index}].key_env": environment variable ${name} is not set`);
  return key;
}

function uniqueNames(names: string[], list: string, field: string): void {
  const seen = new Set<string>();
  for (const [i, name] of names.entries()) {
    if (seen.has(name)) throw new ConfigError(`invalid setting "${list}[${i}].${field}": duplicate "${name}"`);
    seen.add(name);
  }
}

/** What a setting must be, in words an operator can act on. */
function expected(setting: string, error: ValueError): string {
  if (setting === "adminKey" || setting === "metricsKey") {
    const unset = setting === "adminKey" ? ", or leave ADMIN_KEY unset to have one generated on the first start" : "";
    return `must be at least 16 characters: set a longer key (for example openssl rand -hex 24)${unset}`;
  }
  const schema = error.schema as { anyOf?: { const?: unknown }[]; type?: string; minimum?: number; maximum?: number };
  const literals = schema.anyOf?.map((s) => s.const).filter((v) => v !== undefined);
  if (literals && literals.length > 0 && literals.length === schema.anyOf?.length) {
    return `must be one of ${literals.join(", ")}`;
  }
  if (schema.type === "integer" && schema.minimum !== undefined && schema.maximum !== undefined) {
    return `must be a whole number from ${schema.minimum} to ${schema.maximum}`;
  }
  return error.message;
}

/** Builds and validates the configuration; throws a ConfigError naming the bad setting. */
export function loadConfig(env: Env = process.env, overrides?: ConfigOverrides): Config {
  const config = merge(defaultConfig(env), overrides);
  if ((config.trustProxy as unknown) === true) {
    throw new ConfigError(`invalid setting "trustProxy": true ${TRUST_ALL_REFUSED}`);
  }
  const first = [...Value.Errors(ConfigSchema, config)][0];
  if (first) {
    const setting = settingName(first.path);
    // A secret's value never goes into a message, even a wrong one.
    const got =
      SECRET_SETTINGS[setting] !== undefined || /\.key$/.test(setting) ? "" : ` (got ${JSON.stringify(first.value)})`;
    const variable = ENV_OF_SETTING[setting] ?? SECRET_SETTINGS[setting];
    const named = variable ? `"${setting}" (${variable})` : `"${setting}"`;
    throw new ConfigError(`invalid setting ${named}: ${expected(setting, first)}${got}`);
  }
  config.channels = config.channels.map((c, i) => ({ ...c, key: c.key ?? channelKey(env, c, i) }));
  uniqueNames(
    config.channels.map((c) => c.name),
    "channels",
    "name",
  );
  uniqueNames(
    config.prices.map((p) => `${p.kind}:${p.name}`),
    "prices",
    "name",
  );
  if (config.http.headersTimeoutMs > config.http.requestTimeoutMs) {
    throw new ConfigError(
      `invalid setting "http.headersTimeoutMs": ${config.http.headersTimeoutMs} is longer than http.requestTimeoutMs (${config.http.requestTimeoutMs}), which includes the headers`,
    );
  }
  if (typeof config.trustProxy === "string") {
    const bad = badProxyEntry(config.trustProxy);
    if (bad !== null) {
      throw new ConfigError(
        `invalid setting "trustProxy": "${bad}" is not a proxy address, a CIDR range or a hop count; ` +
          "write the number of proxies in front of the gateway (1 behind one load balancer) or their addresses " +
          "(10.0.0.0/8,192.168.1.5)",
      );
    }
  }
  for (const [i, origin] of config.cors.origins.entries()) {
    if (!isCorsOrigin(origin)) {
      throw new ConfigError(
        `invalid setting "cors.origins[${i}]" (CORS_ORIGINS): "${origin}" is not an origin; ` +
          "write scheme, host and port only (https://app.example.com, http://localhost:5173), or * for any",
      );
    }
  }
  if (!/^(sqlite:|postgres(ql)?:\/\/)/.test(config.databaseUrl)) {
    throw new ConfigError('invalid setting "databaseUrl": must start with sqlite: or postgres://');
  }
  checkBlobSettings(config);
  return config;
}

/** `*`, or an origin as a browser sends it: scheme, host and port, nothing after. */
function isCorsOrigin(origin: string): boolean {
  if (origin === "*") return true;
  try {
    const url = new URL(origin);
    const web = url.protocol === "http:" || url.protocol === "https:";
    return web && !url.hostname.includes("*") && url.origin === origin;
  } catch {
    return false;
  }
}

/**
 * The blob location parses, and a bucket's credentials come as a pair. (Whether redirects have a
 * bucket to point at is checked when the stores open: `openBlobStore`.)
 */
function checkBlobSettings(config: Config): void {
  if (blobLocation(config.blobs.url, config.dataDir).kind !== "s3") return;
  const { accessKeyId, secretAccessKey } = config.s3;
  if ((accessKeyId === null) !== (secretAccessKey === null)) {
    const missing = accessKeyId === null ? "S3_ACCESS_KEY_ID" : "S3_SECRET_ACCESS_KEY";
    throw new ConfigError(
      `invalid setting ${missing}: not set, while its pair is; set S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY together, or neither for the SDK's own credentials`,
    );
  }
}
