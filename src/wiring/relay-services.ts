import type { FastifyBaseLogger } from "fastify";
import type { CallLimits } from "../core/metering/ports.js";
import type { VendorRegistry } from "../core/vendor-registry.js";
import type { GatewayMetrics } from "../metrics/registry.js";
import type { ChannelHealth } from "../routing/channel-health.js";
import type { ChannelSlots } from "../routing/channel-slots.js";
import type { KeyPools } from "../routing/key-pools.js";
import type { Channels } from "../store/channels.js";
import type { Ledger } from "../store/ledger.js";
import type { PriceBook } from "../store/prices.js";
import type { RequestLogWriter } from "../store/request-logs.js";

/**
 * What every surface that relays a call to an upstream channel uses: the channels to pick from,
 * the vendors that serve them, the prices and the ledger to bill with, the channel health and
 * concurrency slots, metrics and the request log. Each surface's deps extend it with their own.
 */
export interface RelayServices {
  /** Which channel types serve the surface, and their adapters. */
  vendors: Pick<VendorRegistry, "of" | "serving">;
  channels: Pick<Channels, "candidates" | "isKnownModel">;
  prices: Pick<PriceBook, "contentPrice" | "imagePrice" | "groupRatio">;
  ledger: Pick<Ledger, "charge" | "settle" | "refund" | "noteUsage">;
  health: Pick<ChannelHealth, "report">;
  /** Gives each picked channel a key of its pool and hears how the key did; without it, channels keep their own key. */
  keyPools?: Pick<KeyPools, "keyed" | "report">;
  slots: Pick<ChannelSlots, "acquire">;
  metrics: GatewayMetrics;
  requestLogs: Pick<RequestLogWriter, "log">;
  /** The operators' rate limits of metered calls (requests and tokens per minute). */
  callLimits?: CallLimits;
  /** Aborted when a stop's drain window is over: what still runs (streams) ends now. */
  stopping: AbortSignal;
  logger: FastifyBaseLogger;
}
