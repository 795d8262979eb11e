import { type Kysely, type Selectable, sql } from "kysely";
import type { Channel, ChannelInput, ChannelType } from "../core/channel.js";
import { readChannelSettings } from "../core/channel-settings.js";
import { unixNow } from "../core/ids.js";
import { KEY_ROTATIONS, type KeyRotation } from "../core/key-pool.js";
import { ChannelKeys } from "./channel-keys.js";
import type { ChannelsTable, Database } from "./schema.js";

function toChannel(row: Selectable<ChannelsTable>): Channel {
  return {
    id: Number(row.id),
    name: row.name,
    type: row.type as ChannelType,
    baseUrl: row.base_url,
    key: row.key,
    keyRotation: (KEY_ROTATIONS as readonly string[]).includes(row.key_rotation)
      ? (row.key_rotation as KeyRotation)
      : "round_robin",
    tags: JSON.parse(row.tags),
    models: JSON.parse(row.models),
    modelMapping: JSON.parse(row.model_mapping),
    groups: JSON.parse(row.groups),
    priority: Number(row.priority),
    weight: Number(row.weight),
    priceRatio: Number(row.price_ratio),
    status: row.status,
    statusReason: row.status_reason,
    settings: readChannelSettings(JSON.parse(row.settings)),
    failureCount: Number(row.failure_count),
    lastError: row.last_error,
    lastErrorAt: row.last_error_at === null ? null : Number(row.last_error_at),
    lastSuccessAt: row.last_success_at === null ? null : Number(row.last_success_at),
    successCount: Number(row.success_count),
    requestCount: Number(row.request_count),
    recentSuccessRate: Math.round(Number(row.recent_success_rate) * 1000) / 1000,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

export class Channels {
  private cache: Promise<Channel[]> | null = null;
  private cachedAt = 0;
  /** Changes made outside any instance (the admin CLI) are seen within this time. */
  private static readonly CACHE_TTL_MS = 10_000;

  /** The channels' key pools. */
  readonly keys: ChannelKeys;

  constructor(private readonly db: Kysely<Database>) {
    this.keys = new ChannelKeys(db);
  }

  /** Drops the in-memory list and pools (after a change here or on another instance). */
  invalidate(): void {
    this.cache = null;
    this.keys.invalidate();
  }

  async create(input: ChannelInput): Promise<Channel> {
    const now = unixNow();
    const row = await this.db
      .insertInto("channels")
      .values({
        name: input.name,
        type: input.type,
        base_url: input.baseUrl.replace(/\/+$/, ""),
        key: input.key,
        models: JSON.stringify(input.models),
        model_mapping: JSON.stringify(input.modelMapping ?? {}),
        groups: JSON.stringify(input.groups ?? ["default"]),
        priority: input.priority ?? 0,
        weight: input.weight ?? 1,
        price_ratio: input.priceRatio ?? 1,
        status: input.status ?? "enabled",
        status_reason: "",
        settings: JSON.stringify(input.settings ?? {}),
        key_rotation: input.keyRotation ?? "round_robin",
        tags: JSON.stringify(input.tags ?? []),
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    // The channel's key is the first of its pool.
    const keys = [...new Set([input.key, ...(input.keys ?? [])])];
    await this.db
      .insertInto("channel_keys")
      .values(keys.map((key) => ({ channel_id: Number(row.id), key, created_at: now })))
      .execute();
    this.invalidate();
    return toChannel(row);
  }

  async update(id: number, patch: Partial<ChannelInput> & { statusReason?: string }): Promise<Channel | undefined> {
    const set: Record<string, unknown> = { updated_at: unixNow() };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.type !== undefined) set.type = patch.type;
    if (patch.baseUrl !== undefined) set.base_url = patch.baseUrl.replace(/\/+$/, "");
    if (patch.key !== undefined) set.key = patch.key;
    if (patch.keyRotation !== undefined) set.key_rotation = patch.keyRotation;
    if (patch.tags !== undefined) set.tags = JSON.stringify(patch.tags);
    if (patch.models !== undefined) set.models = JSON.stringify(patch.models);
    if (patch.modelMapping !== undefined) set.model_mapping = JSON.stringify(patch.modelMapping);
    if (patch.groups !== undefined) set.groups = JSON.stringify(patch.groups);
    if (patch.priority !== undefined) set.priority = patch.priority;
    if (patch.weight !== undefined) set.weight = patch.weight;
    if (patch.priceRatio !== undefined) set.price_ratio = patch.priceRatio;
    if (patch.status !== undefined) {
      set.status = patch.status;
      set.status_reason = patch.statusReason ?? "";
      if (patch.status === "enabled") set.failure_count = 0;
    }
    if (patch.settings !== undefined) set.settings = JSON.stringify(patch.settings);
    const row = await this.db.transaction().execute(async (trx) => {
      const updated = await trx.updateTable("channels").set(set).where("id", "=", id).returningAll().executeTakeFirst();
      if (updated && patch.key !== undefined) {
        // A channel given one key is a pool of that one key, as before pools.
        await trx.deleteFrom("channel_keys").where("channel_id", "=", id).execute();
        await trx
          .insertInto("channel_keys")
          .values({ channel_id: id, key: patch.key, created_at: unixNow() })
          .execute();
      }
      return updated;
    });
    this.invalidate();
    return row ? toChannel(row) : undefined;
  }

  /**
   * Deletes a channel unless an unfinished task is bound to it (its poller still needs the
   * channel's address and key). Finished tasks keep the number of the channel that served them.
   */
  async remove(id: number): Promise<{ deleted: true } | { deleted: false; unfinishedTasks: number } | undefined> {
    const outcome = await this.db.transaction().execute(async (trx) => {
      const exists = await trx.selectFrom("channels").select("id").where("id", "=", id).executeTakeFirst();
      if (!exists) return undefined;
      const busy = await trx
        .selectFrom("tasks")
        .select((eb) => eb.fn.countAll().as("n"))
        .where("channel_id", "=", id)
        .where("status", "in", ["NOT_START", "SUBMITTED", "QUEUED", "IN_PROGRESS"])
        .executeTakeFirstOrThrow();
      const unfinishedTasks = Number(busy.n);
      if (unfinishedTasks > 0) return { deleted: false as const, unfinishedTasks };
      await trx.deleteFrom("channel_keys").where("channel_id", "=", id).execute();
      await trx.deleteFrom("channels").where("id", "=", id).execute();
      return { deleted: true as const };
    });
    this.invalidate();
    return outcome;
  }

  async get(id: number): Promise<Channel | undefined> {
    const row = await this.db.selectFrom("channels").selectAll().where("id", "=", id).executeTakeFirst();
    return row ? toChannel(row) : undefined;
  }

  async list(): Promise<Channel[]> {
    const rows = await this.db.selectFrom("channels").selectAll().orderBy("id").execute();
    return rows.map(toChannel);
  }

  /** Every channel, from the cache: concurrent calls after it expired share one read. */
  private all(): Promise<Channel[]> {
    if (!this.cache || Date.now() - this.cachedAt > Channels.CACHE_TTL_MS) {
      const loading = this.list();
      this.cache = loading;
      this.cachedAt = Date.now();
      // A failed read is not kept: the next call reads again.
      loading.catch(() => {
        if (this.cache === loading) this.cache = null;
      });
    }
    return this.cache;
  }

  /** Enabled channels that serve `model` (a model name or a task family) to `group`. */
  async candidates(model: string, group: string, types?: readonly ChannelType[]): Promise<Channel[]> {
    return (await this.all()).filter(
      (c) =>
        c.status === "enabled" &&
        c.models.includes(model) &&
        c.groups.includes(group) &&
        (types === undefined || types.includes(c.type)),
    );
  }

  /** Every public model name enabled channels of the given types serve to `group`, with those types. */
  async servedModels(group: string, types: readonly ChannelType[]): Promise<Map<string, Set<ChannelType>>> {
    const served = new Map<string, Set<ChannelType>>();
    for (const c of await this.all()) {
      if (c.status !== "enabled" || !c.groups.includes(group) || !types.includes(c.type)) continue;
      for (const model of c.models) {
        const set = served.get(model) ?? new Set<ChannelType>();
        set.add(c.type);
        served.set(model, set);
      }
    }
    return served;
  }

  /** Whether any channel (enabled or not) lists this model: tells "unknown" from "unavailable". */
  async isKnownModel(model: string, types?: readonly ChannelType[]): Promise<boolean> {
    return (await this.all()).some((c) => c.models.includes(model) && (types === undefined || types.includes(c.type)));
  }

  /** Counts `successes` successful calls on the channel at once (batched by the health keeper). */
  async recordSuccesses(id: number, successes: number): Promise<void> {
    if (successes <= 0) return;
    // The moving average after n successes in a row: 1 - (1 - rate) * 0.9^n.
    const keep = 0.9 ** successes;
    await this.db
      .updateTable("channels")
      .set({
        failure_count: 0,
        last_success_at: unixNow(),
        success_count: sql`success_count + ${successes}`,
        request_count: sql`request_count + ${successes}`,
        recent_success_rate: sql`1 - (1 - recent_success_rate) * ${keep}`,
      })
      .where("id", "=", id)
      .execute();
  }

  /** Counts one failed call; returns the consecutive failure count after it. */
  async recordFailure(id: number, error: string): Promise<number> {
    const row = await this.db
      .updateTable("channels")
      .set({
        failure_count: sql`failure_count + 1`,
        last_error: error.slice(0, 500),
        last_error_at: unixNow(),
        request_count: sql`request_count + 1`,
        recent_success_rate: sql`recent_success_rate * 0.9`,
      })
      .where("id", "=", id)
      .returning("failure_count")
      .executeTakeFirst();
    return Number(row?.failure_count ?? 0);
  }
}
