import type { Redis } from "ioredis";
import type { RateLimiterAbstract } from "rate-limiter-flexible";
import { countOne, exhausted, makeLimiter, tooMany } from "../../limits/limiter.js";

/** How long failed sign-ins are remembered (seconds). */
const WINDOW_SECONDS = 15 * 60;

export interface LoginLimitSettings {
  perAccount: number;
  perAddress: number;
  keyPrefix: string;
}

/**
 * Slows password guessing: failed sign-ins are counted per account name and per client address
 * over 15 minutes; over either limit, sign-ins are answered 429 with Retry-After until the window
 * moves on. A successful sign-in clears its account's count. Shared through Redis when the gateway
 * has one, so every instance counts alike.
 */
export class LoginLimits {
  private readonly accounts: RateLimiterAbstract;
  private readonly addresses: RateLimiterAbstract;

  constructor(settings: LoginLimitSettings, redis: Redis | null) {
    const make = (points: number, name: string) =>
      makeLimiter({ points, duration: WINDOW_SECONDS, keyPrefix: settings.keyPrefix, name }, redis);
    this.accounts = make(settings.perAccount, "console-login-account");
    this.addresses = make(settings.perAddress, "console-login-address");
  }

  /** Refuses (429) a sign-in to an account, or from an address, that failed too often. */
  async assertAllowed(login: string, address: string): Promise<void> {
    for (const [limiter, key, what] of [
      [this.accounts, accountKey(login), "this account"],
      [this.addresses, address, "this address"],
    ] as const) {
      const res = await exhausted(limiter, key);
      if (res) throw tooMany(`Too many failed sign-ins for ${what}; retry later.`, res);
    }
  }

  async recordFailure(login: string, address: string): Promise<void> {
    await Promise.all([countOne(this.accounts, accountKey(login)), countOne(this.addresses, address)]);
  }

  /** A successful sign-in clears the account's failures (the address keeps its count). */
  async clearAccount(login: string): Promise<void> {
    await this.accounts.delete(accountKey(login));
  }
}

const accountKey = (login: string) => login.trim().toLowerCase();
