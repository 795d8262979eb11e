import { Value } from "@sinclair/typebox/value";
import { describe, expect, it } from "vitest";
import {
  ChannelSettingsApiSchema,
  ChannelSettingsSchema,
  readChannelSettings,
  settingsFromApi,
  settingsToApi,
} from "./channel-settings.js";

describe("channel settings", () => {
  it("spells every setting both ways and back without losing one", () => {
    const stored = {
      timeoutMs: 120_000,
      connectTimeoutMs: 2_000,
      firstByteTimeoutMs: 30_000,
      batchSize: 20,
      concurrency: 4,
      pollsPerSecond: 2.5,
      prefix: "suno",
    };
    const api = settingsToApi(stored);
    expect(api).toEqual({
      timeout_ms: 120_000,
      connect_timeout_ms: 2_000,
      first_byte_timeout_ms: 30_000,
      batch_size: 20,
      concurrency: 4,
      polls_per_second: 2.5,
      prefix: "suno",
    });
    expect(settingsFromApi(api)).toEqual(stored);
  });

  it("holds the admin API and the config file to the same bounds", () => {
    for (const [stored, api, value] of [
      ["connectTimeoutMs", "connect_timeout_ms", 49],
      ["connectTimeoutMs", "connect_timeout_ms", 600_001],
      ["timeoutMs", "timeout_ms", 99],
      ["batchSize", "batch_size", 101],
      ["concurrency", "concurrency", 0],
      ["pollsPerSecond", "polls_per_second", 0],
      ["pollsPerSecond", "polls_per_second", 1001],
      ["prefix", "prefix", "a/b"],
    ] as const) {
      expect(Value.Check(ChannelSettingsSchema, { [stored]: value }), stored).toBe(false);
      expect(Value.Check(ChannelSettingsApiSchema, { [api]: value }), api).toBe(false);
    }
    expect(Value.Check(ChannelSettingsSchema, { connectTimeoutMs: 50 })).toBe(true);
    expect(Value.Check(ChannelSettingsApiSchema, { connect_timeout_ms: 600_000 })).toBe(true);
  });

  it("reads from a stored value only the known settings within their bounds", () => {
    expect(readChannelSettings({ timeoutMs: 5_000, concurrency: 0, retired: true })).toEqual({ timeoutMs: 5_000 });
    expect(readChannelSettings(null)).toEqual({});
    expect(readChannelSettings([1])).toEqual({});
  });
});
