import type { Redis } from "ioredis";
import { type RateLimiterAbstract, RateLimiterRes } from "rate-limiter-flexible";
import { countOne, exhausted, makeLimiter, tooMany } from "./limiter.js";

export interface RateLimitSettings {
  requestsPerMinute: number;
  authFailuresPerMinute: number;
  keyPrefix: string;
}

/**
 * Request limits per token and failed-authentication limits per client address (only failed
 * attempts are ever refused by the latter: a request with a valid credential passes). In memory for
 * one instance; in Redis when the gateway has one, so the limit holds across every instance.
 */
export class RateLimits {
  private readonly requests: RateLimiterAbstract | null;
  private readonly authFailures: RateLimiterAbstract;
  /** Called when a request is refused for its rate (metrics). */
  onLimited: (kind: "requests" | "auth_failures") => void = () => {};

  constructor(settings: RateLimitSettings, redis: Redis | null) {
    const make = (points: number, name: string) =>
      makeLimiter({ points, duration: 60, keyPrefix: settings.keyPrefix, name }, redis);
    this.requests = settings.requestsPerMinute > 0 ? make(settings.requestsPerMinute, "req") : null;
    this.authFailures = make(settings.authFailuresPerMinute, "authfail");
  }

  /** Counts one request of a token; throws a 429 GatewayError (with Retry-After) over the limit. */
  async consumeRequest(tokenId: number): Promise<void> {
    if (!this.requests) return;
    try {
      await this.requests.consume(String(tokenId));
    } catch (res) {
      if (res instanceof RateLimiterRes) {
        this.onLimited("requests");
        throw tooMany("Too many requests for this token; retry later.", res);
      }
      throw res;
    }
  }

  /**
   * Counts one failed authentication of an address and refuses it (429 with Retry-After) when the
   * address is over its limit; below the limit it returns and the caller answers 401.
   */
  async failAuthentication(address: string): Promise<void> {
    await this.assertAuthAllowed(address);
    await this.recordAuthFailure(address);
  }

  /** Refuses an address that has failed authentication too often. */
  async assertAuthAllowed(address: string): Promise<void> {
    const res = await exhausted(this.authFailures, address);
    if (res) {
      this.onLimited("auth_failures");
      throw tooMany("Too many failed authentications from this address; retry later.", res);
    }
  }

  /** Counts one failed authentication of an address. */
  async recordAuthFailure(address: string): Promise<void> {
    await countOne(this.authFailures, address);
  }
}
