import { readFileSync } from "node:fs";
import path from "node:path";
import { type TSchema, TypeGuard } from "@sinclair/typebox";
import { parse as parseYaml } from "yaml";
import type { ChannelType } from "../core/channel.js";
import { inCatalogTransaction } from "../store/catalog-transaction.js";
import type { Store } from "../store/database.js";
import { type Config, ConfigError, type ConfigOverrides, ConfigSchema, loadConfig } from "./load.js";
import { ENV_OF_SETTING, SECRET_SETTINGS } from "./settings.js";

type Env = Record<string, string | undefined>;

export { ENV_OF_SETTING, SECRET_SETTINGS };

/** Lists the file alone sets (there is no environment variable for them). */
export const FILE_ONLY_SETTINGS = ["prices", "groupRatios", "channels"] as const;

type Tree = Record<string, unknown>;

function isTree(value: unknown): value is Tree {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Parses YAML (`.yaml`, `.yml`, anything else) or JSON (`.json`); the top level must be a map. */
export function parseConfigText(text: string, fileName: string): Tree {
  let value: unknown;
  try {
    value = fileName.endsWith(".json") ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    const reason = (err as Error).message.split("\n")[0]?.replace(/:\s*$/, "");
    throw new ConfigError(`cannot parse config file ${fileName}: ${reason}`);
  }
  if (value === null || value === undefined) return {};
  if (!isTree(value)) throw new ConfigError(`config file ${fileName} must hold a map of settings at its top level`);
  return value;
}

/**
 * Refuses names the gateway does not know and secrets, with the setting named. Values are
 * checked later, with everything else, by `loadConfig`.
 */
export function checkSettingNames(file: Tree, schema: TSchema = ConfigSchema, prefix = ""): void {
  if (!TypeGuard.IsObject(schema)) return;
  for (const [key, value] of Object.entries(file)) {
    const setting = prefix ? `${prefix}.${key}` : key;
    if (SECRET_SETTINGS[setting]) {
      throw new ConfigError(
        `invalid setting "${setting}": secrets are read from the environment only (set ${SECRET_SETTINGS[setting]})`,
      );
    }
    const child = schema.properties[key];
    if (!child) {
      const known = Object.keys(schema.properties).filter((k) => !SECRET_SETTINGS[prefix ? `${prefix}.${k}` : k]);
      throw new ConfigError(`invalid setting "${setting}": unknown setting (known here: ${known.join(", ")})`);
    }
    if (isTree(value)) checkSettingNames(value, child, setting);
  }
  if (!prefix && Array.isArray(file.channels)) {
    for (const [i, channel] of file.channels.entries()) {
      if (isTree(channel) && "key" in channel) {
        throw new ConfigError(
          `invalid setting "channels[${i}].key": channel keys are read from the environment; name the variable in key_env`,
        );
      }
    }
  }
}

function deletePath(tree: Tree, dotted: string): void {
  const keys = dotted.split(".");
  const last = keys.pop() as string;
  const parent = keys.reduce<unknown>((node, key) => (isTree(node) ? node[key] : undefined), tree);
  if (isTree(parent)) delete parent[last];
}

/** The file's settings minus those the environment sets, as overrides for `loadConfig`. */
export function fileOverrides(file: Tree, env: Env): ConfigOverrides {
  const settings = structuredClone(file);
  for (const [setting, name] of Object.entries(ENV_OF_SETTING)) {
    if (env[name]) deletePath(settings, setting);
  }
  // The SQLite file lives in the data directory unless DATABASE_URL says otherwise.
  if (typeof settings.dataDir === "string" && !env.DATABASE_URL) {
    settings.databaseUrl = `sqlite:${path.join(settings.dataDir, "gateway.sqlite")}`;
  }
  // A file naming an S3 endpoint means path-style addressing unless something says otherwise.
  const s3 = settings.s3;
  if (isTree(s3) && typeof s3.endpoint === "string" && s3.forcePathStyle === undefined && !env.S3_FORCE_PATH_STYLE) {
    s3.forcePathStyle = true;
  }
  return settings as ConfigOverrides;
}

/** The config file named by `--config` or, failing that, CONFIG_FILE; null when neither is set. */
export function configFilePath(flag: string | undefined, env: Env): string | null {
  return flag || env.CONFIG_FILE || null;
}

/**
 * Loads the configuration with a config file under the environment and `overrides` (command-line
 * flags). A bad file throws a ConfigError naming the file and the setting.
 */
export function loadConfigWithFile(filePath: string, env: Env, overrides: ConfigOverrides = {}): Config {
  let text: string;
  try {
    text = readFileSync(filePath, "utf8");
  } catch (err) {
    throw new ConfigError(`cannot read config file ${filePath}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  const file = parseConfigText(text, filePath);
  try {
    checkSettingNames(file);
    const given = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
    return loadConfig(env, { ...fileOverrides(file, env), ...given });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const setting = /^invalid setting "([^"]+)"/.exec(err.message)?.[1];
    const top = setting?.split(/[.[]/)[0];
    // Say where the bad value came from when it is the file's.
    if (top !== undefined && top in file) throw new ConfigError(`${filePath}: ${err.message}`);
    throw err;
  }
}

/**
 * Writes the configured prices and group ratios to the store and creates the configured channels
 * that no channel's name matches yet. On PostgreSQL a transaction-scoped advisory lock keeps two
 * instances starting together from both creating a channel.
 */
export async function applyConfiguredCatalog(
  store: Store,
  config: Pick<Config, "prices" | "groupRatios" | "channels">,
): Promise<{ prices: number; groupRatios: number; channelsCreated: string[] }> {
  const ratios = Object.entries(config.groupRatios);
  if (config.prices.length === 0 && ratios.length === 0 && config.channels.length === 0) {
    return { prices: 0, groupRatios: 0, channelsCreated: [] };
  }
  return inCatalogTransaction(store, async ({ prices, channels }) => {
    for (const p of config.prices) {
      await prices.setPrice({
        kind: p.kind,
        name: p.name,
        price: p.price,
        inputPerMillion: p.input_per_million,
        outputPerMillion: p.output_per_million,
        cachedRatio: p.cached_ratio,
      });
    }
    for (const [group, ratio] of ratios) await prices.setGroupRatio(group, ratio);
    const existing = new Set((await channels.list()).map((c) => c.name));
    const created: string[] = [];
    for (const c of config.channels) {
      if (existing.has(c.name)) continue;
      await channels.create({
        name: c.name,
        type: c.type as ChannelType,
        baseUrl: c.base_url,
        key: c.key as string,
        models: c.models,
        modelMapping: c.model_mapping,
        groups: c.groups,
        priority: c.priority,
        weight: c.weight,
        priceRatio: c.price_ratio,
        status: c.status,
        settings: c.settings,
      });
      created.push(c.name);
    }
    return { prices: config.prices.length, groupRatios: ratios.length, channelsCreated: created };
  });
}
