import Fastify, { type FastifyInstance } from "fastify";
import { anthropicSimulator } from "./anthropic.js";
import { deepSeekSimulator } from "./deepseek.js";
import { openAiEmbeddingsSimulator } from "./embeddings.js";
import { geminiSimulator } from "./gemini.js";
import { generateRecordSimulator } from "./generate-record.js";
import { MediaLog, mediaFilesSimulator } from "./media-files.js";
import { openAiChatSimulator } from "./openai-chat.js";
import { openAiImagesSimulator } from "./openai-images.js";
import { openAiVideosSimulator } from "./openai-videos.js";
import type { SimulatorOptions } from "./options.js";
import type { ReceivedRequest, SimulatorState } from "./state.js";
import { taskRelaySimulator } from "./task-relay.js";
import { UsageLog, usageLogRoute } from "./usage-log.js";

export type { OpenAiVideosReceived, VideoDownload, VideoObject, VideoReference } from "./openai-videos.js";
export type * from "./options.js";
export type { GeminiSimRequest, ReceivedRequest, SimulatorState } from "./state.js";
export type { ReportedUsage, UsageRecord } from "./usage-log.js";

export interface Simulator {
  url: string;
  app: FastifyInstance;
  state: SimulatorState;
  received: ReceivedRequest[];
  usage: UsageLog;
  /** The result files downloaded so far. */
  media: MediaLog;
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
  // Closing drops every connection at once: a client that stopped reading a slow download must not hold it open.
  const app = Fastify({ logger: false, bodyLimit: 256 * 1024 * 1024, forceCloseConnections: true });
  const received: ReceivedRequest[] = [];
  let url = "";
  const usage = new UsageLog();
  const state: SimulatorState = {
    options,
    received,
    random: seededRandom(options.seed ?? 1),
    baseUrl: () => url,
    usage,
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
  await app.register(openAiVideosSimulator, { state });
  await app.register(usageLogRoute, { log: usage });
  await app.register(openAiChatSimulator, { state });
  await app.register(openAiEmbeddingsSimulator, { state });
  await app.register(anthropicSimulator, { state });
  await app.register(deepSeekSimulator, { state, prefix: "/deepseek" });
  const media = new MediaLog();
  await app.register(mediaFilesSimulator, { state, log: media });
  const address = await app.listen({ host: options.host ?? "127.0.0.1", port: options.port ?? 0 });
  url = address;
  return {
    url,
    app,
    state,
    received,
    usage,
    media,
    close: () => app.close(),
  };
}
