import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Channels } from "../../src/store/channels.js";
import type { Database } from "../../src/store/schema.js";
import { openTestStore, type TestStore } from "../support/test-store.js";

// Every call reads the channels and their key pools from a short cache; when it runs out under
// load, a burst of calls must share one read of each table, not send one each (each read takes a
// connection of the store's pool, which the calls themselves need).

/** The store's query builder, counting the reads of each table. */
function counting(db: Kysely<Database>): { db: Kysely<Database>; reads: Map<string, number> } {
  const reads = new Map<string, number>();
  const proxy = new Proxy(db, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop !== "selectFrom") return typeof value === "function" ? value.bind(target) : value;
      return (table: string) => {
        reads.set(table, (reads.get(table) ?? 0) + 1);
        return (value as (t: string) => unknown).call(target, table);
      };
    },
  });
  return { db: proxy as Kysely<Database>, reads };
}

describe("the channel and key pool caches", () => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore("sqlite", "mg-channel-cache-");
    const channels = new Channels(t.store.db);
    for (const name of ["a", "b"]) {
      await channels.create({
        name,
        type: "openai-chat",
        baseUrl: "http://127.0.0.1:9",
        key: `key-${name}`,
        models: ["m"],
      });
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  it("share one read among a burst of calls, and read again once invalidated", async () => {
    const { db, reads } = counting(t.store.db);
    const channels = new Channels(db);
    const burst = await Promise.all(
      Array.from({ length: 50 }, async () => ({
        candidates: await channels.candidates("m", "default"),
        pools: await channels.keys.pools(),
      })),
    );
    expect(burst.every((b) => b.candidates.length === 2 && b.pools.size === 2)).toBe(true);
    expect(reads.get("channels")).toBe(1);
    expect(reads.get("channel_keys")).toBe(1);

    channels.invalidate();
    await Promise.all(Array.from({ length: 20 }, () => channels.candidates("m", "default")));
    await Promise.all(Array.from({ length: 20 }, () => channels.keys.pools()));
    expect(reads.get("channels")).toBe(2);
    expect(reads.get("channel_keys")).toBe(2);
  });
});
