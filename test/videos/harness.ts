import OpenAI from "openai";
import type { ConfigOverrides } from "../../src/config/load.js";
import { type Simulator, type SimulatorOptions, startSimulator } from "../../src/simulator/server.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";

/** Short poll timings so tests end quickly (no assertion depends on them). */
export const FAST_VIDEOS: ConfigOverrides = {
  logLevel: "warn",
  tasks: { pollIntervalMs: 40, maxPollIntervalMs: 300, workerTickMs: 20 },
  images: { allowPrivateUrls: true },
};

export interface VideoEnv {
  gw: TestGateway;
  sim: Simulator;
  channelId: number;
  close(): Promise<void>;
}

function merge(a: ConfigOverrides, b: ConfigOverrides): ConfigOverrides {
  const out: Record<string, unknown> = { ...a, ...b };
  for (const key of ["tasks", "images", "videos"] as const) {
    out[key] = { ...(a as Record<string, object>)[key], ...(b as Record<string, object>)[key] };
  }
  return out as ConfigOverrides;
}

/** A simulator and a gateway with one `openai-videos` channel serving sora-2 and sora-2-pro. */
export async function startVideoEnv(
  kind: StoreKind,
  options: { sim?: SimulatorOptions; config?: ConfigOverrides; pollsPerSecond?: number } = {},
): Promise<VideoEnv> {
  const sim = await startSimulator({ seed: 11, keys: ["sim-key"], ...options.sim });
  const gw = await startTestGateway(kind, merge(FAST_VIDEOS, options.config ?? {}));
  const channelId = await gw.createChannel({
    type: "openai-videos",
    baseUrl: sim.url,
    models: ["sora-2", "sora-2-pro"],
    settings: { pollsPerSecond: options.pollsPerSecond ?? 200 },
  });
  return {
    gw,
    sim,
    channelId,
    async close() {
      await gw.close();
      await sim.close();
    },
  };
}

/** The official OpenAI client pointed at the gateway with a user's key. */
export function clientOf(gw: TestGateway, key: string): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
}

/** The ledger rows of one video's charge reference. */
export async function ledgerRowsOf(gw: TestGateway, userId: number, videoId: string) {
  const rows = await gw.gateway.ctx.ledger.entries(userId, { limit: 1000 });
  return rows.filter((r) => r.reference === `task:${videoId}`).map((r) => ({ kind: r.kind, amount: Number(r.amount) }));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `check()` holds; fails after `limitMs` (a guard, not a timing check). */
export async function eventually<T>(check: () => Promise<T | null | undefined | false>, limitMs = 15_000): Promise<T> {
  const until = Date.now() + limitMs;
  while (Date.now() < until) {
    const v = await check();
    if (v) return v;
    await sleep(25);
  }
  throw new Error("condition not reached in time");
}

/** Polls a video through the client until it has ended. */
export async function untilEnded(client: OpenAI, id: string) {
  return eventually(async () => {
    const v = await client.videos.retrieve(id);
    return v.status === "completed" || v.status === "failed" ? v : null;
  });
}

/** A small PNG (1x1), for reference images. */
export const TINY_PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
  "base64",
);
