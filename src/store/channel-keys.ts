import { type Kysely, type Selectable, sql } from "kysely";
import { unixNow } from "../core/ids.js";
import { isLive, type PoolKey, probeDelayMs } from "../core/key-pool.js";
import type { ChannelKeysTable, Database } from "./schema.js";

function toKey(row: Selectable<ChannelKeysTable>): PoolKey {
  return {
    id: Number(row.id),
    channelId: Number(row.channel_id),
    key: row.key,
    enabled: Number(row.enabled) === 1,
    deadReason: row.dead_reason,
    deadAt: row.dead_at === null ? null : Number(row.dead_at),
    nextProbeAt: row.next_probe_at === null ? null : Number(row.next_probe_at),
    probeFailures: Number(row.probe_failures),
    calls: Number(row.calls),
    failures: Number(row.failures),
    lastError: row.last_error,
    lastErrorAt: row.last_error_at === null ? null : Number(row.last_error_at),
    createdAt: Number(row.created_at),
  };
}

/** What a bulk import did. */
export interface KeysAdded {
  added: PoolKey[];
  /** Keys the pool already held. */
  duplicates: number;
}

/**
 * The key pools of channels. The store is where a key's state lives, so a key found dead on one
 * instance is skipped by all: each instance reads the pools into memory for a short while, and
 * drops them when a change is announced (the channels' topic) or the while is over.
 */
export class ChannelKeys {
  /** The pools as last read, or being read: concurrent calls share one read of the table. */
  private cache: Promise<Map<number, PoolKey[]>> | null = null;
  private cachedAt = 0;
  /** Changes made elsewhere without an announcement are seen within this time. */
  static readonly CACHE_TTL_MS = 5_000;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number = Date.now,
  ) {}

  invalidate(): void {
    this.cache = null;
  }

  /** Every key of every channel, by channel, in the order they were added (cached briefly). */
  pools(): Promise<Map<number, PoolKey[]>> {
    if (!this.cache || this.now() - this.cachedAt > ChannelKeys.CACHE_TTL_MS) {
      const loading = this.readPools();
      this.cache = loading;
      this.cachedAt = this.now();
      // A failed read is not kept: the next call reads again.
      loading.catch(() => {
        if (this.cache === loading) this.cache = null;
      });
    }
    return this.cache;
  }

  private async readPools(): Promise<Map<number, PoolKey[]>> {
    const rows = await this.db.selectFrom("channel_keys").selectAll().orderBy("id").execute();
    const pools = new Map<number, PoolKey[]>();
    for (const row of rows) {
      const key = toKey(row);
      const list = pools.get(key.channelId);
      if (list) list.push(key);
      else pools.set(key.channelId, [key]);
    }
    return pools;
  }

  /** A channel's keys from the store (not the cache). */
  async listFor(channelId: number): Promise<PoolKey[]> {
    const rows = await this.db
      .selectFrom("channel_keys")
      .selectAll()
      .where("channel_id", "=", channelId)
      .orderBy("id")
      .execute();
    return rows.map(toKey);
  }

  async get(channelId: number, keyId: number): Promise<PoolKey | undefined> {
    const row = await this.db
      .selectFrom("channel_keys")
      .selectAll()
      .where("channel_id", "=", channelId)
      .where("id", "=", keyId)
      .executeTakeFirst();
    return row ? toKey(row) : undefined;
  }

  /** Adds the keys the pool does not hold yet. */
  async add(channelId: number, keys: readonly string[]): Promise<KeysAdded> {
    const held = new Set((await this.listFor(channelId)).map((k) => k.key));
    const fresh = [...new Set(keys)].filter((k) => !held.has(k));
    let added: PoolKey[] = [];
    if (fresh.length > 0) {
      const created = unixNow();
      const rows = await this.db
        .insertInto("channel_keys")
        .values(fresh.map((key) => ({ channel_id: channelId, key, created_at: created })))
        .returningAll()
        .execute();
      added = rows.map(toKey);
      await this.syncChannelKey(channelId);
    }
    this.invalidate();
    return { added, duplicates: keys.length - fresh.length };
  }

  /** Enables or disables a key; returns it, or undefined when the channel has no such key. */
  async setEnabled(channelId: number, keyId: number, enabled: boolean): Promise<PoolKey | undefined> {
    const row = await this.db
      .updateTable("channel_keys")
      .set({ enabled: enabled ? 1 : 0 })
      .where("channel_id", "=", channelId)
      .where("id", "=", keyId)
      .returningAll()
      .executeTakeFirst();
    if (row) await this.syncChannelKey(channelId);
    this.invalidate();
    return row ? toKey(row) : undefined;
  }

  /** Removes a key; false when the channel has no such key. */
  async remove(channelId: number, keyId: number): Promise<boolean> {
    const gone = await this.db
      .deleteFrom("channel_keys")
      .where("channel_id", "=", channelId)
      .where("id", "=", keyId)
      .executeTakeFirst();
    const removed = Number(gone.numDeletedRows) > 0;
    if (removed) await this.syncChannelKey(channelId);
    this.invalidate();
    return removed;
  }

  /**
   * Marks a live key dead; true when this call did it (another instance may have been first).
   * Its first probe is due after the first delay.
   */
  async markDead(keyId: number, reason: string): Promise<boolean> {
    const now = this.now();
    const done = await this.db
      .updateTable("channel_keys")
      .set({
        dead_reason: reason.slice(0, 500),
        dead_at: Math.floor(now / 1000),
        next_probe_at: now + probeDelayMs(0),
        probe_failures: 0,
      })
      .where("id", "=", keyId)
      .where("dead_at", "is", null)
      .returning("channel_id")
      .executeTakeFirst();
    if (done) await this.syncChannelKey(Number(done.channel_id));
    this.invalidate();
    return done !== undefined;
  }

  /** Brings a dead key back. */
  async revive(keyId: number): Promise<void> {
    await this.db
      .updateTable("channel_keys")
      .set({ dead_reason: null, dead_at: null, next_probe_at: null, probe_failures: 0 })
      .where("id", "=", keyId)
      .returning("channel_id")
      .executeTakeFirst()
      .then((row) => (row ? this.syncChannelKey(Number(row.channel_id)) : undefined));
    this.invalidate();
  }

  /** Dead, enabled keys whose probe is due. */
  async dueForProbe(): Promise<PoolKey[]> {
    const rows = await this.db
      .selectFrom("channel_keys")
      .selectAll()
      .where("enabled", "=", 1)
      .where("dead_at", "is not", null)
      .where("next_probe_at", "<=", this.now())
      .orderBy("next_probe_at")
      .limit(100)
      .execute();
    return rows.map(toKey);
  }

  /**
   * Takes a due probe of a key for this instance: moves its next probe to the wait after one
   * more failure, if no other instance moved it first. The probe's success revives the key.
   */
  async claimProbe(key: Pick<PoolKey, "id" | "nextProbeAt" | "probeFailures">): Promise<boolean> {
    if (key.nextProbeAt === null) return false;
    const done = await this.db
      .updateTable("channel_keys")
      .set({
        next_probe_at: this.now() + probeDelayMs(key.probeFailures + 1),
        probe_failures: key.probeFailures + 1,
      })
      .where("id", "=", key.id)
      .where("next_probe_at", "=", key.nextProbeAt)
      .executeTakeFirst();
    return Number(done.numUpdatedRows) > 0;
  }

  /** Adds to a key's counters (batched by the pool keeper). */
  async recordCalls(keyId: number, calls: number, failures: number, lastError: string | null): Promise<void> {
    const set: Record<string, unknown> = {
      calls: sql`calls + ${calls}`,
      failures: sql`failures + ${failures}`,
    };
    if (lastError !== null) {
      set.last_error = lastError.slice(0, 500);
      set.last_error_at = unixNow();
    }
    await this.db.updateTable("channel_keys").set(set).where("id", "=", keyId).execute();
  }

  /**
   * Keeps the channel row's own key the pool's first live key (else its first key), which what
   * reads a channel without a pool (a task's poll, a channel test) uses.
   */
  private async syncChannelKey(channelId: number): Promise<void> {
    const keys = await this.listFor(channelId);
    const first = keys.find(isLive) ?? keys[0];
    if (first) await this.db.updateTable("channels").set({ key: first.key }).where("id", "=", channelId).execute();
  }
}
