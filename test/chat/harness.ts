import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import type { ConfigOverrides } from "../../src/config/load.js";
import { type Simulator, type SimulatorOptions, startSimulator } from "../../src/simulator/server.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";

export const CHAT_MODEL = "chat-model";
export const SIM_KEY = "sim-chat-key-0123456789";
export const PRICE = { inputPerMillion: 3, outputPerMillion: 15, cachedRatio: 0.1 };
export const UPSTREAM_TYPES = ["openai-chat", "anthropic", "gemini"] as const;
export type UpstreamType = (typeof UPSTREAM_TYPES)[number];

export interface ChatHarness {
  gw: TestGateway;
  sim: Simulator;
  channelId: number;
  user: { userId: number; tokenId: number; key: string };
  close(): Promise<void>;
}

/** The simulator options of one upstream type's text model. */
export function simTextOptions(
  type: UpstreamType,
  text: NonNullable<SimulatorOptions["openaiChat"]>,
): SimulatorOptions {
  if (type === "openai-chat") return { openaiChat: text };
  if (type === "anthropic") return { anthropic: text };
  return { gemini: { text } };
}

/** A gateway, a simulator behind one channel of the given type serving CHAT_MODEL, and a user. */
export async function startChatHarness(
  kind: StoreKind,
  type: UpstreamType,
  simOptions: SimulatorOptions = {},
  overrides: ConfigOverrides = {},
): Promise<ChatHarness> {
  const sim = await startSimulator({ keys: [SIM_KEY], ...simOptions });
  const gw = await startTestGateway(kind, overrides);
  await gw.gateway.ctx.prices.setPrice({ kind: "content", name: CHAT_MODEL, ...PRICE });
  const channelId = await gw.createChannel({
    type,
    baseUrl: sim.url,
    key: SIM_KEY,
    models: [CHAT_MODEL],
    modelMapping: { [CHAT_MODEL]: "sim-chat" },
  });
  const user = await gw.createUser({ quota: 50_000_000 });
  return {
    gw,
    sim,
    channelId,
    user,
    async close() {
      await gw.close();
      await sim.close();
    },
  };
}

/** The official OpenAI client, unmodified, pointed at the gateway. */
export function openAiClient(gw: TestGateway, key: string): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
}

/** Ledger rows of the user's chat calls, oldest first. */
export async function chatLedger(gw: TestGateway, userId: number) {
  const rows = await gw.gateway.ctx.ledger.entries(userId, { limit: 1000 });
  return rows
    .filter((r) => r.reference.startsWith("chat:"))
    .map((r) => ({ kind: r.kind, amount: Number(r.amount), reference: r.reference }))
    .reverse();
}

/** Net quota taken by the user's most recent chat call, and its reference. */
export async function lastChatCost(gw: TestGateway, userId: number) {
  const rows = await chatLedger(gw, userId);
  const reference = rows[rows.length - 1]?.reference ?? "";
  const mine = rows.filter((r) => r.reference === reference);
  return { reference, kinds: mine.map((r) => r.kind), cost: 0 - mine.reduce((s, r) => s + r.amount, 0) };
}

/**
 * The quota a usage costs at ratio 1, by hand from PRICE: fresh input at 3, cached input at
 * 3 x 0.1, output at 15 per million; 500,000 quota per unit; rounded up once.
 */
export function quotaOf(usage: { input: number; output: number; cached: number }): number {
  const units = ((usage.input - usage.cached) * 3 + usage.cached * 0.3 + usage.output * 15) / 1e6;
  return Math.ceil(Math.round(units * 500_000 * 1e6) / 1e6);
}

/** The request-log rows of chat calls, once everything queued is written. */
export async function chatRequestLogs(gw: TestGateway) {
  await gw.gateway.ctx.requestLogs.flush();
  return gw.gateway.ctx.store.db
    .selectFrom("request_logs")
    .selectAll()
    .where("surface", "=", "chat")
    .orderBy("id")
    .execute();
}

/** A local HTTP server answering every path with the given image bytes. */
export async function serveImage(bytes: Buffer, type = "image/png"): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": type, "content-length": bytes.length });
    res.end(bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/picture.png`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
