import { Redis } from "ioredis";
import type { ChangeBus, ChangeTopic } from "./change-bus.js";

const TOPICS = new Set<ChangeTopic>(["tokens", "users", "channels", "prices"]);

/**
 * Change announcements shared by every instance through Redis pub/sub: a token revoked on one
 * instance is dropped from every instance's cache as soon as the message arrives (milliseconds).
 * Caches also expire on their own, so a lost message costs at most one cache lifetime.
 */
export class RedisChangeBus implements ChangeBus {
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly channel: string;
  private readonly listeners = new Set<(topic: ChangeTopic) => void>();

  private constructor(url: string, prefix: string) {
    const options = { lazyConnect: true, maxRetriesPerRequest: 2, enableAutoPipelining: true };
    this.pub = new Redis(url, options);
    this.sub = new Redis(url, options);
    this.channel = `${prefix}:changes`; // also in announceOnce
    // Connection trouble is retried by ioredis; it must never crash the process.
    this.pub.on("error", () => {});
    this.sub.on("error", () => {});
    this.sub.on("message", (_channel: string, message: string) => {
      if (!TOPICS.has(message as ChangeTopic)) return;
      for (const listener of this.listeners) listener(message as ChangeTopic);
    });
  }

  static async connect(url: string, prefix: string): Promise<RedisChangeBus> {
    const bus = new RedisChangeBus(url, prefix);
    await Promise.all([bus.pub.connect(), bus.sub.connect()]);
    await bus.sub.subscribe(bus.channel);
    return bus;
  }

  /**
   * Announces changes made outside any gateway (the admin command line) and disconnects: one
   * attempt, no retries, so an unreachable Redis fails at once instead of holding the caller.
   */
  static async announceOnce(url: string, prefix: string, topics: Iterable<ChangeTopic>): Promise<void> {
    const client = new Redis(url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      connectTimeout: 3000,
      enableOfflineQueue: false,
    });
    client.on("error", () => {});
    try {
      await client.connect();
      for (const topic of topics) await client.publish(`${prefix}:changes`, topic);
    } finally {
      client.disconnect();
    }
  }

  /** The publishing connection, shared with the rate limiter. */
  get client(): Redis {
    return this.pub;
  }

  async publish(topic: ChangeTopic): Promise<void> {
    await this.pub.publish(this.channel, topic);
  }

  subscribe(listener: (topic: ChangeTopic) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await Promise.allSettled([this.sub.quit(), this.pub.quit()]);
  }
}
