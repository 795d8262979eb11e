import { type Static, type TOptional, type TSchema, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";

/**
 * A channel's settings: one definition, one set of bounds. The stored form and the config file
 * spell them in camelCase (`connectTimeoutMs`), the admin API in snake_case (`connect_timeout_ms`);
 * both schemas below are built from this one table, so they cannot drift apart.
 */
const SETTINGS = {
  /** Whole-call limit of one upstream request (ms). */
  timeoutMs: {
    api: "timeout_ms",
    schema: Type.Integer({ minimum: 100, maximum: 3_600_000, description: "whole-call limit (ms)" }),
  },
  /** Time allowed to open the TCP (and TLS) connection to the upstream (ms). */
  connectTimeoutMs: {
    api: "connect_timeout_ms",
    schema: Type.Integer({ minimum: 50, maximum: 600_000, description: "time to connect to the upstream (ms)" }),
  },
  /** Time allowed until the first byte of the upstream answer, its headers (ms). */
  firstByteTimeoutMs: {
    api: "first_byte_timeout_ms",
    schema: Type.Integer({ minimum: 50, maximum: 3_600_000, description: "time to the answer's headers (ms)" }),
  },
  /** Most ids in one poll call (task-relay). */
  batchSize: {
    api: "batch_size",
    schema: Type.Integer({ minimum: 1, maximum: 100, description: "poll ids per call" }),
  },
  /** Most upstream calls in flight at once on this channel, per instance. */
  concurrency: {
    api: "concurrency",
    schema: Type.Integer({ minimum: 1, maximum: 1000, description: "calls in flight on this channel" }),
  },
  /** Most polls a second this instance sends the channel (openai-videos: one GET per video); default 10. */
  pollsPerSecond: {
    api: "polls_per_second",
    schema: Type.Number({ exclusiveMinimum: 0, maximum: 1000, description: "polls a second (openai-videos)" }),
  },
  /** Path word in front of /submit and /fetch (task-relay); default the family word. */
  prefix: {
    api: "prefix",
    schema: Type.String({ pattern: "^[A-Za-z0-9_-]{1,64}$", description: "task-relay path word" }),
  },
} as const;

type Settings = typeof SETTINGS;
type StoredName = keyof Settings;
type ApiName = Settings[StoredName]["api"];

/** A setting's name as stored and as the config file writes it. */
export type ChannelSettingName = StoredName;

/** The settings of every upstream call, which every channel type reads: its time limits and its concurrency. */
export const CALL_SETTINGS: readonly ChannelSettingName[] = [
  "timeoutMs",
  "connectTimeoutMs",
  "firstByteTimeoutMs",
  "concurrency",
];

/** A setting as the admin API describes it: its name there and its JSON schema (bounds, description). */
export interface ChannelSettingSpec {
  name: string;
  schema: TSchema;
}

/** The admin API's description of the named settings. */
export function settingSpecs(names: readonly ChannelSettingName[]): ChannelSettingSpec[] {
  return names.map((name) => ({ name: SETTINGS[name].api, schema: SETTINGS[name].schema }));
}

const STORED_NAMES = Object.keys(SETTINGS) as StoredName[];

function optionalFields<K extends string>(name: (stored: StoredName) => K) {
  const props: Record<string, TSchema> = {};
  for (const stored of STORED_NAMES) props[name(stored)] = Type.Optional(SETTINGS[stored].schema);
  return props;
}

/** The settings as stored and as the config file writes them (camelCase). */
export const ChannelSettingsSchema = Type.Object(
  optionalFields((s) => s) as { [K in StoredName]: TOptional<Settings[K]["schema"]> },
  { additionalProperties: false },
);

/** The same settings, with the same bounds, as the admin API spells them (snake_case). */
export const ChannelSettingsApiSchema = Type.Object(
  optionalFields((s) => SETTINGS[s].api) as {
    [K in StoredName as Settings[K]["api"]]: TOptional<Settings[K]["schema"]>;
  },
  { additionalProperties: false },
);

/** Per-channel knobs; every one optional, the adapter applies its default. */
export type ChannelSettings = Static<typeof ChannelSettingsSchema>;
/** The settings in the admin API's spelling. */
export type ChannelSettingsApi = Static<typeof ChannelSettingsApiSchema>;

/** The admin API's spelling of stored settings. */
export function settingsToApi(s: ChannelSettings): ChannelSettingsApi {
  const out: Record<string, unknown> = {};
  for (const stored of STORED_NAMES) if (s[stored] !== undefined) out[SETTINGS[stored].api] = s[stored];
  return out as ChannelSettingsApi;
}

/** Stored settings from the admin API's spelling. */
export function settingsFromApi(s: ChannelSettingsApi): ChannelSettings {
  const out: Record<string, unknown> = {};
  for (const stored of STORED_NAMES) {
    const value = s[SETTINGS[stored].api as ApiName];
    if (value !== undefined) out[stored] = value;
  }
  return out as ChannelSettings;
}

/**
 * The settings a stored value holds: each known setting within its bounds is kept, anything
 * else (a name no longer known, a value out of bounds) is left out, so the adapter's default applies.
 */
export function readChannelSettings(value: unknown): ChannelSettings {
  if (!value || typeof value !== "object" || Array.isArray(value)) return {};
  const given = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const stored of STORED_NAMES) {
    if (given[stored] !== undefined && Value.Check(SETTINGS[stored].schema, given[stored])) out[stored] = given[stored];
  }
  return out as ChannelSettings;
}
