import Fastify, { type FastifyInstance } from "fastify";
import { type GeminiSimOptions, geminiSimulator } from "./gemini.js";
import { type GenerateRecordSimOptions, generateRecordSimulator } from "./generate-record.js";
import { type OpenAiImagesSimOptions, openAiImagesSimulator } from "./openai-images.js";
import { type TaskRelaySimOptions, taskRelaySimulator } from "./task-relay.js";

/** One request as the simulator received it, for tests to inspect. */
export interface ReceivedRequest {
  protocol: "task-relay" | "generate-record" | "gemini" | "openai-images";
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  at: number;
  /** Set when the client went away before the answer was complete. */
  aborted?: boolean;
}

export interface SimulatorOptions {
  host?: string;
  port?: number;
  /** Seed of the simulator's random choices: the same seed gives the same run. */
  seed?: number;
  /** Keys the simulator accepts; any non-empty key when absent. */
  keys?: string[];
  taskRelay?: TaskRelaySimOptions;
  generateRecord?: GenerateRecordSimOptions;
  gemini?: GeminiSimOptions;
  openaiImages?: OpenAiImagesSimOptions;
}

/** What each protocol plugin shares with the others. */
export interface SimulatorState {
  options: SimulatorOptions;
  received: ReceivedRequest[];
  /** Deterministic random numbers in [0, 1) from the seed. */
  random(): number;
  /** Base URL the simulator listens on (for URLs it hands out). */
  baseUrl(): string;
  record(entry: Omit<ReceivedRequest, "at">): ReceivedRequest;
}

export interface Simulator {
  url: string;
  app: FastifyInstance;
  state: SimulatorState;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

/** mulberry32: small, fast, good enough for simulated randomness. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Starts a local upstream that speaks every upstream protocol of the gateway. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const app = Fastify({ logger: false, bodyLimit: 256 * 1024 * 1024 });
  const received: ReceivedRequest[] = [];
  let url = "";
  const state: SimulatorState = {
    options,
    received,
    random: seededRandom(options.seed ?? 1),
    baseUrl: () => url,
    record(entry) {
      const full = { ...entry, at: Date.now() };
      received.push(full);
      return full;
    },
  };
  await app.register(taskRelaySimulator, { state });
  await app.register(generateRecordSimulator, { state });
  await app.register(geminiSimulator, { state });
  await app.register(openAiImagesSimulator, { state });
  const address = await app.listen({ host: options.host ?? "127.0.0.1", port: options.port ?? 0 });
  url = address;
  return {
    url,
    app,
    state,
    received,
    close: () => app.close(),
  };
}
