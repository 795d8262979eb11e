/** The upstream connection pools, one per connect timeout, and the parsed targets of the URLs called. */
import { Agent } from "undici";

/** Time allowed to open a connection when the channel sets no `connectTimeoutMs`. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

function keepAliveAgent(connectTimeoutMs: number): Agent {
  return new Agent({
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 120_000,
    connections: 512,
    connect: { timeout: connectTimeoutMs },
  });
}

/**
 * Keep-alive connection pools for upstream calls, one per connect timeout in use: channels that
 * set none (or the same one) share a pool. The connect timeout is a setting of the pool in undici,
 * so a channel's `connectTimeoutMs` picks its pool.
 */
const agents = new Map<number, Agent>([[DEFAULT_CONNECT_TIMEOUT_MS, keepAliveAgent(DEFAULT_CONNECT_TIMEOUT_MS)]]);

export function agentFor(connectTimeoutMs: number | undefined): Agent {
  const timeout = connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  let agent = agents.get(timeout);
  if (!agent) {
    agent = keepAliveAgent(timeout);
    agents.set(timeout, agent);
  }
  return agent;
}

/** Most URLs whose origin and path are kept (channels times models times actions, in practice far fewer). */
const MAX_TARGETS = 1000;

/** The origin and path of each URL called, parsed once: a call names its pool by origin. */
const targets = new Map<string, { origin: string; path: string }>();

/**
 * `url` split as undici's `request(url)` splits it (the path with its query, no fragment); throws
 * when it is not an http(s) URL.
 */
export function targetOf(url: string): { origin: string; path: string } {
  let target = targets.get(url);
  if (!target) {
    const parsed = new URL(url);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new TypeError(`unsupported protocol ${parsed.protocol}`);
    }
    target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
    if (targets.size >= MAX_TARGETS) targets.clear();
    targets.set(url, target);
  }
  return target;
}
