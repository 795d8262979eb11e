import type { Kysely, Selectable } from "kysely";
import { DEFAULT_PRICES, type DefaultPrice } from "../core/default-prices.js";
import { unixNow } from "../core/ids.js";
import { defaultUnit, type TokenPrice } from "../core/pricing.js";
import type { Database, PricesTable } from "./schema.js";

export type PriceKind = "task" | "image" | "content";
export type PriceRow = Selectable<PricesTable>;

/** A price as it is set, a default price as any other: what its kind does not use is left out. */
export type PriceInput = DefaultPrice;

/**
 * The stored row of a price set at `now`. A token price's rates come from `rates`, else from the
 * older fields (a cached ratio other than 1 becomes the cache-read rate, input x ratio); the
 * cached ratio is kept beside them for a rollback to read.
 */
function priceRow(p: PriceInput, now: number) {
  const r = p.rates ?? {};
  const input = r.input ?? p.inputPerMillion ?? 0;
  const cacheRead =
    r.cacheRead !== undefined
      ? r.cacheRead
      : p.cachedRatio !== undefined && p.cachedRatio !== 1
        ? input * p.cachedRatio
        : null;
  return {
    kind: p.kind,
    name: p.name,
    unit: p.unit ?? defaultUnit(p.kind, p.name),
    price: p.price ?? 0,
    input_per_million: input,
    output_per_million: r.output ?? p.outputPerMillion ?? 0,
    cached_ratio: cacheRead !== null && input > 0 ? cacheRead / input : (p.cachedRatio ?? 1),
    cache_read_per_million: cacheRead,
    cache_write_5m_per_million: r.cacheWrite5m ?? null,
    cache_write_1h_per_million: r.cacheWrite1h ?? null,
    audio_input_per_million: r.audioInput ?? null,
    reasoning_per_million: r.reasoning ?? null,
    audio_output_per_million: r.audioOutput ?? null,
    updated_at: now,
  };
}

const rate = (v: number | string | null) => (v === null ? null : Number(v));

/** The token price of a stored row: a null rate falls back (see core/pricing.ts). */
export function tokenPriceOf(row: PriceRow): TokenPrice {
  return {
    input: Number(row.input_per_million),
    output: Number(row.output_per_million),
    cacheRead: rate(row.cache_read_per_million),
    cacheWrite5m: rate(row.cache_write_5m_per_million),
    cacheWrite1h: rate(row.cache_write_1h_per_million),
    audioInput: rate(row.audio_input_per_million),
    reasoning: rate(row.reasoning_per_million),
    audioOutput: rate(row.audio_output_per_million),
  };
}

/** Prices and group ratios, read from the store and cached until a change is announced. */
export class PriceBook {
  private prices: Map<string, PriceRow> | null = null;
  private ratios: Map<string, number> | null = null;
  private loadedAt = 0;
  /** Changes made outside any instance (the admin CLI, the store directly) are seen within this time. */
  private static readonly CACHE_TTL_MS = 10_000;

  private fresh(): boolean {
    if (Date.now() - this.loadedAt > PriceBook.CACHE_TTL_MS) {
      this.prices = null;
      this.ratios = null;
      this.loadedAt = Date.now();
    }
    return true;
  }

  constructor(private readonly db: Kysely<Database>) {}

  invalidate(): void {
    this.prices = null;
    this.ratios = null;
  }

  /** Inserts the default prices that the store does not have yet; never overwrites. */
  async seedDefaults(): Promise<void> {
    const now = unixNow();
    for (const p of DEFAULT_PRICES) {
      await this.db
        .insertInto("prices")
        .values(priceRow(p, now))
        .onConflict((oc) => oc.columns(["kind", "name"]).doNothing())
        .execute();
    }
    this.invalidate();
  }

  private async priceMap(): Promise<Map<string, PriceRow>> {
    this.fresh();
    if (!this.prices) {
      const rows = await this.db.selectFrom("prices").selectAll().execute();
      this.prices = new Map(rows.map((r) => [`${r.kind}:${r.name}`, r]));
    }
    return this.prices;
  }

  /** Per-call price of a task action (`audioa`, `MUSIC`), or null when none is set. */
  async taskPrice(family: string, action: string): Promise<number | null> {
    const row = (await this.priceMap()).get(`task:${family}:${action}`);
    return row ? Number(row.price) : null;
  }

  /** Per-image price of an image model, or null. */
  async imagePrice(model: string): Promise<number | null> {
    const row = (await this.priceMap()).get(`image:${model}`);
    return row ? Number(row.price) : null;
  }

  /** Token prices of a content model, or null. */
  async contentPrice(model: string): Promise<TokenPrice | null> {
    const row = (await this.priceMap()).get(`content:${model}`);
    // A content model priced per another unit is not token-priced: the token surfaces cannot bill it.
    if (!row || row.unit !== "tokens") return null;
    return tokenPriceOf(row);
  }

  async listPrices(): Promise<PriceRow[]> {
    return [...(await this.priceMap()).values()].sort((a, b) =>
      `${a.kind}:${a.name}`.localeCompare(`${b.kind}:${b.name}`),
    );
  }

  async setPrice(p: PriceInput): Promise<void> {
    const values = priceRow(p, unixNow());
    const { kind: _kind, name: _name, ...update } = values;
    await this.db
      .insertInto("prices")
      .values(values)
      .onConflict((oc) => oc.columns(["kind", "name"]).doUpdateSet(update))
      .execute();
    this.invalidate();
  }

  /** One price as stored now (not from the cache). */
  getPrice(kind: PriceKind, name: string): Promise<PriceRow | undefined> {
    return this.db
      .selectFrom("prices")
      .selectAll()
      .where("kind", "=", kind)
      .where("name", "=", name)
      .executeTakeFirst();
  }

  /** Deletes a price; requests that need it are refused until one is set again. */
  async deletePrice(kind: PriceKind, name: string): Promise<boolean> {
    const rows = await this.db
      .deleteFrom("prices")
      .where("kind", "=", kind)
      .where("name", "=", name)
      .returning("name")
      .execute();
    this.invalidate();
    return rows.length > 0;
  }

  /** Ratio of a billing group; 1 for a group with no ratio set. */
  async groupRatio(group: string): Promise<number> {
    this.fresh();
    if (!this.ratios) {
      const rows = await this.db.selectFrom("group_ratios").selectAll().execute();
      this.ratios = new Map(rows.map((r) => [r.group, Number(r.ratio)]));
    }
    return this.ratios.get(group) ?? 1;
  }

  async listGroupRatios(): Promise<{ group: string; ratio: number }[]> {
    const rows = await this.db.selectFrom("group_ratios").selectAll().orderBy("group").execute();
    return rows.map((r) => ({ group: r.group, ratio: Number(r.ratio) }));
  }

  async setGroupRatio(group: string, ratio: number): Promise<void> {
    await this.db
      .insertInto("group_ratios")
      .values({ group, ratio, updated_at: unixNow() })
      .onConflict((oc) => oc.column("group").doUpdateSet({ ratio, updated_at: unixNow() }))
      .execute();
    this.invalidate();
  }
}
