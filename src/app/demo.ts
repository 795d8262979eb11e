import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../config/load.js";
import { newAdminKey } from "../core/ids.js";
import { type Simulator, startSimulator } from "../simulator/server.js";
import { buildGateway, type Gateway } from "./gateway.js";

const UPSTREAM_KEY = "demo-upstream-key";
/** Chat models of the demo, each served by the simulator in its vendor's protocol. */
const CHAT_MODELS = { openai: "demo-gpt", anthropic: "demo-claude" };
/** The embedding models of the demo (their prices are default prices). */
const EMBEDDING_MODELS = { openai: "text-embedding-3-small", gemini: "gemini-embedding-001" };
/** The video model of the demo (its price per second is one of the default prices). */
const VIDEO_MODEL = "sora-2";
const CHAT_PRICE = { inputPerMillion: 1, outputPerMillion: 4, cachedRatio: 0.1 };
const IMAGE_MODELS = [
  "image-model",
  "image-model-pro-1k",
  "image-model-pro-2k",
  "image-model-pro-4k",
  "image-model-2-0.5k",
  "image-model-2-1k",
  "image-model-2-2k",
  "image-model-2-4k",
];

export interface Demo {
  gateway: Gateway;
  simulator: Simulator;
  url: string;
  token: string;
  /** The admin key of this demo's gateway. */
  adminKey: string;
  /** Ready-to-paste commands, one per endpoint. */
  commands: string[];
  stop(): Promise<void>;
}

const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/**
 * A curl line; a stream gets `-N`, so that events show as they arrive instead of when curl's buffer
 * fills, and a file download `-o <file>`, so that its bytes land in a file, not the terminal.
 */
function curl(
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: unknown,
  options: { stream?: boolean; output?: string } = {},
): string {
  const parts = [
    "curl -sS",
    options.stream ? "-N" : "",
    options.output ? `-o ${q(options.output)}` : "",
    method === "GET" ? "" : `-X ${method}`,
    q(url),
  ];
  for (const [k, v] of Object.entries(headers)) parts.push(`-H ${q(`${k}: ${v}`)}`);
  if (body !== undefined) parts.push(`-H ${q("Content-Type: application/json")}`, `-d ${q(JSON.stringify(body))}`);
  return parts.filter(Boolean).join(" ");
}

/** Fetches an audioa task until it has succeeded; answers its first clip's id. */
async function firstClipOf(url: string, bearer: Record<string, string>, taskId: string): Promise<string> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    const res = await fetch(`${url}/audioa/fetch/${taskId}`, { headers: bearer });
    const record = ((await res.json()) as { data?: { status?: string; data?: { clips?: { clip_id: string }[] } } })
      .data;
    const clipId = record?.data?.clips?.[0]?.clip_id;
    if (record?.status === "SUCCESS" && clipId) return clipId;
    if (record?.status === "FAILURE") break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the demo's first task ${taskId} did not succeed`);
}

/** Fetches a video until it has completed; answers its id. */
async function completedVideo(url: string, bearer: Record<string, string>, body: unknown): Promise<string> {
  const created = await fetch(`${url}/v1/videos`, {
    method: "POST",
    headers: { ...bearer, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const { id } = (await created.json()) as { id?: string };
  const until = Date.now() + 60_000;
  while (id && Date.now() < until) {
    const res = await fetch(`${url}/v1/videos/${id}`, { headers: bearer });
    const status = ((await res.json()) as { status?: string }).status;
    if (status === "completed") return id;
    if (status === "failed") break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the demo's video ${id ?? `(create answered ${created.status})`} did not complete`);
}

/**
 * Starts the simulator and a gateway on a fresh SQLite file, seeds a user, a token, a channel
 * for every surface and the default prices, and submits one task of each family so that the
 * fetch commands have something to show (and waits for the audioa one, whose clip EXTEND continues)
 * and one video, waited for until it has completed, so that its poll and download lines show it.
 */
export async function startDemo(options: { port?: number } = {}): Promise<Demo> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "media-gateway-demo-"));
  const simulator = await startSimulator({
    seed: 1,
    keys: [UPSTREAM_KEY],
    taskRelay: { completeAfterMs: 5000 },
    generateRecord: { completeAfterMs: 5000 },
  });
  const adminKey = newAdminKey();
  const config = loadConfig(process.env, {
    dataDir,
    databaseUrl: `sqlite:${path.join(dataDir, "gateway.sqlite")}`,
    port: options.port,
    adminKey,
    redisUrl: null,
    logLevel: (process.env.LOG_LEVEL as "info" | undefined) ?? "warn",
    tasks: { pollIntervalMs: 500, workerTickMs: 100 },
  });
  const gateway = await buildGateway(config);
  const url = await gateway.listen();
  const { ctx } = gateway;

  const user = await ctx.users.create({ name: "demo" });
  await ctx.ledger.topUp(Number(user.id), 100 * config.quotaPerUnit, "topup:demo", "demo quota: 100 units");
  const { key: token } = await ctx.tokens.create({ userId: Number(user.id), name: "demo" });
  const channel = (name: string, type: string, models: string[]) =>
    ctx.channels.create({ name, type, baseUrl: simulator.url, key: UPSTREAM_KEY, models });
  await channel("simulated audioa", "task-relay", ["audioa"]);
  await channel("simulated audiob", "generate-record", ["audiob"]);
  await channel("simulated gemini", "gemini", [
    "gemini-2.5-flash",
    "gemini-2.5-pro",
    ...IMAGE_MODELS,
    EMBEDDING_MODELS.gemini,
  ]);
  await channel("simulated openai-chat", "openai-chat", [CHAT_MODELS.openai, EMBEDDING_MODELS.openai]);
  await channel("simulated anthropic", "anthropic", [CHAT_MODELS.anthropic]);
  await channel("simulated openai-videos", "openai-videos", [VIDEO_MODEL]);
  for (const model of Object.values(CHAT_MODELS)) {
    await ctx.prices.setPrice({ kind: "content", name: model, ...CHAT_PRICE });
  }
  await ctx.announce("channels");

  const bearer = { Authorization: `Bearer ${token}` };
  const submit = async (family: string, body: unknown) => {
    const res = await fetch(`${url}/${family}/submit/MUSIC`, {
      method: "POST",
      headers: { ...bearer, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const answer = (await res.json()) as { data: string };
    return answer.data;
  };
  const audioaBody = { gpt_description_prompt: "an upbeat synthwave song about night drives", mv: "chirp-v3-5" };
  const audiobBody = { prompt: "a calm piano piece for a rainy morning", model: "V4_5" };
  const taskA = await submit("audioa", audioaBody);
  const taskB = await submit("audiob", audiobBody);
  // EXTEND continues one of the user's clips: the demo's first song, once it is done.
  const lyricsBody = { prompt: "a lighthouse keeper who waits for the ships" };
  const extendBody = { clip_id: await firstClipOf(url, bearer, taskA), continue_at: 30, prompt: "[Bridge]\nand on" };
  const videoBody = { model: VIDEO_MODEL, prompt: "a paper boat drifting down a rainy street", seconds: "4" };
  const videoId = await completedVideo(url, bearer, videoBody);
  const content = { contents: [{ role: "user", parts: [{ text: "Write a haiku about gateways." }] }] };

  const chat = {
    model: CHAT_MODELS.openai,
    messages: [{ role: "user", content: "Write a haiku about gateways." }],
  };
  const streamedChat = { ...chat, stream: true, stream_options: { include_usage: true } };
  const anthropicHeaders = { "x-api-key": token, "anthropic-version": "2023-06-01" };
  const message = {
    model: CHAT_MODELS.anthropic,
    max_tokens: 256,
    messages: [{ role: "user", content: "Write a haiku about gateways." }],
  };
  const commands = [
    curl("POST", `${url}/audioa/submit/MUSIC`, bearer, audioaBody),
    curl("GET", `${url}/audioa/fetch/${taskA}`, bearer),
    curl("POST", `${url}/audioa/fetch`, bearer, { ids: [taskA] }),
    curl("POST", `${url}/audioa/submit/LYRICS`, bearer, lyricsBody),
    curl("POST", `${url}/audioa/submit/EXTEND`, bearer, extendBody),
    curl("POST", `${url}/audiob/submit/MUSIC`, bearer, audiobBody),
    curl("POST", `${url}/audiob/fetch`, bearer, { ids: [taskB] }),
    curl("POST", `${url}/v1/images/generations`, bearer, {
      model: "image-model-pro-2k",
      prompt: "a lighthouse at dusk",
      aspect_ratio: "16:9",
    }),
    curl("POST", `${url}/v1beta/models/gemini-2.5-flash:generateContent`, { "x-goog-api-key": token }, content),
    curl(
      "POST",
      `${url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`,
      { "x-goog-api-key": token },
      content,
      { stream: true },
    ),
    curl("POST", `${url}/v1beta/models/gemini-2.5-flash:countTokens`, { "x-goog-api-key": token }, content),
    curl("GET", `${url}/v1beta/models`, { "x-goog-api-key": token }),
    curl("POST", `${url}/v1/chat/completions`, bearer, chat),
    curl("POST", `${url}/v1/chat/completions`, bearer, streamedChat),
    curl("POST", `${url}/v1/messages`, anthropicHeaders, message),
    curl("POST", `${url}/v1/messages`, anthropicHeaders, { ...message, stream: true }),
    curl("POST", `${url}/v1/messages/count_tokens`, anthropicHeaders, {
      model: message.model,
      messages: message.messages,
    }),
    curl("POST", `${url}/v1/embeddings`, bearer, {
      model: EMBEDDING_MODELS.openai,
      input: ["a lighthouse at dusk", "a paper boat"],
      dimensions: 8,
    }),
    curl(
      "POST",
      `${url}/v1beta/models/${EMBEDDING_MODELS.gemini}:embedContent`,
      { "x-goog-api-key": token },
      {
        content: { parts: [{ text: "a lighthouse at dusk" }] },
        outputDimensionality: 8,
      },
    ),
    curl("POST", `${url}/v1/videos`, bearer, videoBody),
    curl("GET", `${url}/v1/videos/${videoId}`, bearer),
    curl("GET", `${url}/v1/videos/${videoId}/content`, bearer, undefined, { output: "demo-video.mp4" }),
    curl("GET", `${url}/v1/models`, bearer),
    curl("GET", `${url}/api/admin/users`, { Authorization: `Bearer ${adminKey}` }),
  ];
  return {
    gateway,
    simulator,
    url,
    token,
    adminKey,
    commands,
    async stop() {
      await gateway.close();
      await simulator.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** `media-gateway demo`: runs until Ctrl-C, printing the token and one command per endpoint. */
export async function runDemo(port: number | undefined): Promise<void> {
  const demo = await startDemo({ port });
  const out = (line = "") => process.stdout.write(`${line}\n`);
  out();
  out(`media-gateway demo: gateway ${demo.url}, simulated upstreams ${demo.simulator.url}`);
  out(`token: ${demo.token}`);
  out(`admin key: ${demo.adminKey}`);
  out("(a fresh SQLite store in a temporary folder, removed on exit; tasks finish about 5 s after submit)");
  out();
  for (const command of demo.commands) out(command);
  out();
  out("demo ready: press Ctrl-C to stop");
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await demo.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop());
  process.on("SIGTERM", () => void stop());
}
