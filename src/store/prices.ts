import type { Kysely, Selectable } from "kysely";
import { DEFAULT_PRICES, type DefaultPrice } from "../core/default-prices.js";
import { unixNow } from "../core/ids.js";
import type { TokenPrice } from "../core/pricing.js";
import type { Database, PricesTable } from "./schema.js";

export type PriceKind = "task" | "image" | "content";
export type PriceRow = Selectable<PricesTable>;

/** A price as it is set, a default price as any other: what its kind does not use is left out. */
export type PriceInput = DefaultPrice;

/** The stored row of a price set at `now`. */
function priceRow(p: PriceInput, now: number) {
  return {
    kind: p.kind,
    name: p.name,
    price: p.price ?? 0,
    input_per_million: p.inputPerMillion ?? 0,
    output_per_million: p.outputPerMillion ?? 0,
    cached_ratio: p.cachedRatio ?? 1,
    updated_at: now,
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
    if (!row) return null;
    return {
      inputPerMillion: Number(row.input_per_million),
      outputPerMillion: Number(row.output_per_million),
      cachedRatio: Number(row.cached_ratio),
    };
  }

  async listPrices(): Promise<PriceRow[]> {
    return [...(await this.priceMap()).values()].sort((a, b) =>
      `${a.kind}:${a.name}`.localeCompare(`${b.kind}:${b.name}`),
    );
  }

  async setPrice(p: PriceInput): Promise<void> {
    const values = priceRow(p, unixNow());
    await this.db
      .insertInto("prices")
      .values(values)
      .onConflict((oc) =>
        oc.columns(["kind", "name"]).doUpdateSet({
          price: values.price,
          input_per_million: values.input_per_million,
          output_per_million: values.output_per_million,
          cached_ratio: values.cached_ratio,
          updated_at: values.updated_at,
        }),
      )
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
