import type { Channel } from "../channel.js";
import { settingSpecs, settingsToApi } from "../channel-settings.js";
import { keyState, maskKey, type PoolKey } from "../key-pool.js";
import { shownReference } from "../top-up-reference.js";
import type { AdminPorts, LedgerRecord, PriceRecord, TokenRecord, UserRecord } from "./ports.js";
import type {
  ChannelKeyView,
  ChannelTypeView,
  ChannelView,
  LedgerEntryView,
  PriceView,
  TokenView,
  UserView,
} from "./shapes.js";

/** The views the admin API answers with, built from the store's records. */

/** A user as the admin API shows it (the webhook secret never leaves the store). */
export function userView(u: UserRecord): UserView {
  return {
    id: Number(u.id),
    name: u.name,
    group: u.group,
    status: u.status as UserView["status"],
    webhook_url: u.webhook_url,
    email: u.email ?? null,
    quota: Number(u.quota),
    used_quota: Number(u.used_quota),
    credit_line: Number(u.credit_line),
    created_at: Number(u.created_at),
    updated_at: Number(u.updated_at),
  };
}

/** A token as the admin API lists it: no key, no hash. */
export function tokenView(t: TokenRecord): TokenView {
  return {
    id: Number(t.id),
    user_id: Number(t.user_id),
    name: t.name,
    key_prefix: t.key_prefix,
    status: t.status as TokenView["status"],
    expires_at: t.expires_at === null ? null : Number(t.expires_at),
    quota_limit: t.quota_limit === null ? null : Number(t.quota_limit),
    used_quota: Number(t.used_quota),
    models: t.models ? (JSON.parse(t.models) as string[]) : null,
    ip_allow: t.ip_allow ? (JSON.parse(t.ip_allow) as string[]) : null,
    created_at: Number(t.created_at),
    updated_at: Number(t.updated_at),
  };
}

/** A channel as an API may show it: everything but the key. */
export function channelView(c: Channel): ChannelView {
  return {
    id: c.id,
    name: c.name,
    type: c.type,
    base_url: c.baseUrl,
    models: c.models,
    model_mapping: c.modelMapping,
    groups: c.groups,
    priority: c.priority,
    weight: c.weight,
    price_ratio: c.priceRatio,
    status: c.status as ChannelView["status"],
    settings: settingsToApi(c.settings),
    key_rotation: c.keyRotation,
    tags: c.tags,
    status_reason: c.statusReason,
    failure_count: c.failureCount,
    last_error: c.lastError,
    last_error_at: c.lastErrorAt,
    last_success_at: c.lastSuccessAt,
    success_count: c.successCount,
    request_count: c.requestCount,
    recent_success_rate: c.recentSuccessRate,
    // Filled from the request log where a view is answered over HTTP (channel list and show).
    latency_ms_p50: null,
    created_at: c.createdAt,
    updated_at: c.updatedAt,
  };
}

const rateOrNull = (v: number | string | null) => (v === null ? null : Number(v));

export function priceView(r: PriceRecord): PriceView {
  return {
    kind: r.kind as PriceView["kind"],
    name: r.name,
    unit: r.unit as PriceView["unit"],
    price: Number(r.price),
    input_per_million: Number(r.input_per_million),
    output_per_million: Number(r.output_per_million),
    cache_read_per_million: rateOrNull(r.cache_read_per_million),
    cache_write_5m_per_million: rateOrNull(r.cache_write_5m_per_million),
    cache_write_1h_per_million: rateOrNull(r.cache_write_1h_per_million),
    audio_input_per_million: rateOrNull(r.audio_input_per_million),
    reasoning_per_million: rateOrNull(r.reasoning_per_million),
    audio_output_per_million: rateOrNull(r.audio_output_per_million),
    cached_ratio: Number(r.cached_ratio),
    updated_at: Number(r.updated_at),
  };
}

/** A ledger row with the top-up reference as the operator gave it. */
export function ledgerEntryView(r: LedgerRecord): LedgerEntryView {
  return {
    id: Number(r.id),
    user_id: Number(r.user_id),
    token_id: r.token_id === null ? null : Number(r.token_id),
    kind: r.kind,
    amount: Number(r.amount),
    reference: shownReference(r),
    note: r.note,
    created_at: Number(r.created_at),
  };
}

/** Every channel type of the registry, in its order. */
export function channelTypeViews(registry: AdminPorts["vendors"]): ChannelTypeView[] {
  return registry.adapters.map(
    (adapter): ChannelTypeView => ({
      type: adapter.type,
      description: adapter.description,
      capabilities: registry.capabilitiesOf(adapter),
      task_platforms: registry.platformsOf(adapter),
      settings: settingSpecs(adapter.settings).map((s) => ({
        name: s.name,
        description: typeof s.schema.description === "string" ? s.schema.description : "",
        schema: s.schema,
      })),
    }),
  );
}

/** A pool key as the admin API shows it: masked, never the key. */
export function channelKeyView(k: PoolKey): ChannelKeyView {
  return {
    id: k.id,
    channel_id: k.channelId,
    key: maskKey(k.key),
    state: keyState(k),
    enabled: k.enabled,
    dead_reason: k.deadReason,
    dead_at: k.deadAt,
    next_probe_at: k.nextProbeAt === null ? null : Math.floor(k.nextProbeAt / 1000),
    calls: k.calls,
    failures: k.failures,
    last_error: k.lastError,
    last_error_at: k.lastErrorAt,
    created_at: k.createdAt,
  };
}
