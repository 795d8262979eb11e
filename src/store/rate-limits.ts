import type { Kysely } from "kysely";
import type { LimitScope, RateLimitRule } from "../core/limits/rate-limit-rules.js";
import type { Database } from "./schema.js";

/** The operators' rate limits (table `rate_limits`), read through a cache of a few seconds. */
export class RateLimitRules {
  private static readonly CACHE_TTL_MS = 10_000;
  private cached: Promise<RateLimitRule[]> | null = null;
  private loadedAt = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Drops the cache: the next read loads the table again. */
  invalidate(): void {
    this.cached = null;
  }

  /** Every rule, from the cache (loaded again after CACHE_TTL_MS or a change). */
  rules(): Promise<RateLimitRule[]> {
    if (!this.cached || this.now() - this.loadedAt > RateLimitRules.CACHE_TTL_MS) {
      this.loadedAt = this.now();
      const loading = this.list();
      this.cached = loading;
      loading.catch(() => {
        if (this.cached === loading) this.cached = null;
      });
    }
    return this.cached;
  }

  /** Every rule, from the table, by scope, subject and group. */
  async list(): Promise<RateLimitRule[]> {
    const rows = await this.db
      .selectFrom("rate_limits")
      .selectAll()
      .orderBy("scope")
      .orderBy("subject")
      .orderBy("group_name")
      .execute();
    return rows.map((r) => ({
      scope: r.scope as LimitScope,
      subject: r.subject,
      group: r.group_name,
      requestsPerMinute: r.requests_per_minute === null ? null : Number(r.requests_per_minute),
      tokensPerMinute: r.tokens_per_minute === null ? null : Number(r.tokens_per_minute),
    }));
  }

  /** Sets a rule (replacing the one of the same scope, subject and group). */
  async set(rule: RateLimitRule): Promise<void> {
    const limits = {
      requests_per_minute: rule.requestsPerMinute,
      tokens_per_minute: rule.tokensPerMinute,
      updated_at: Math.floor(Date.now() / 1000),
    };
    await this.db
      .insertInto("rate_limits")
      .values({ scope: rule.scope, subject: rule.subject, group_name: rule.group, ...limits })
      .onConflict((oc) => oc.columns(["scope", "subject", "group_name"]).doUpdateSet(limits))
      .execute();
    this.invalidate();
  }

  /** Removes a rule; false when there was none. */
  async remove(scope: LimitScope, subject: string, group: string): Promise<boolean> {
    const rows = await this.db
      .deleteFrom("rate_limits")
      .where("scope", "=", scope)
      .where("subject", "=", subject)
      .where("group_name", "=", group)
      .returning("scope")
      .execute();
    this.invalidate();
    return rows.length > 0;
  }
}
