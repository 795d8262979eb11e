import { GoogleGenAI } from "@google/genai";
import { type Simulator, type SimulatorOptions, startSimulator } from "../../src/simulator/server.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";

export const MODEL = "gemini-2.5-flash";
export const SIM_KEY = "sim-key-0123456789";

/** A gateway on the given store, one simulator as its Gemini upstream, one channel to it. */
export interface ContentHarness {
  gw: TestGateway;
  sim: Simulator;
  channelId: number;
  close(): Promise<void>;
}

export async function startContentHarness(kind: StoreKind, simOptions: SimulatorOptions = {}): Promise<ContentHarness> {
  const sim = await startSimulator({ keys: [SIM_KEY], ...simOptions, gemini: { text: {}, ...simOptions.gemini } });
  const gw = await startTestGateway(kind);
  const channelId = await gw.createChannel({
    type: "gemini",
    baseUrl: sim.url,
    key: SIM_KEY,
    models: [MODEL],
    modelMapping: { [MODEL]: "sim-flash" },
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

/** The official client, unmodified, pointed at the gateway. */
export function sdkFor(gw: TestGateway, apiKey: string): GoogleGenAI {
  return new GoogleGenAI({ apiKey, httpOptions: { baseUrl: gw.url } });
}

/** Ledger rows of the user's content calls, oldest first. */
export async function contentLedger(gw: TestGateway, userId: number) {
  const rows = await gw.gateway.ctx.ledger.entries(userId, { limit: 1000 });
  return rows
    .filter((r) => r.reference.startsWith("content:"))
    .map((r) => ({ kind: r.kind, amount: Number(r.amount), reference: r.reference }))
    .reverse();
}

/** Net quota taken for one reference (charge plus settle or refund), as a positive number. */
export function netCost(rows: { amount: number; reference: string }[], reference: string): number {
  return 0 - rows.filter((r) => r.reference === reference).reduce((sum, r) => sum + r.amount, 0);
}

/** The request-log rows of content calls, once everything queued is written. */
export async function contentRequestLogs(gw: TestGateway) {
  await gw.gateway.ctx.requestLogs.flush();
  return gw.gateway.ctx.store.db
    .selectFrom("request_logs")
    .selectAll()
    .where("surface", "=", "content")
    .orderBy("id")
    .execute();
}

/** The body of a user turn with one text part. */
export function userText(text: string, extra: Record<string, unknown> = {}) {
  return { contents: [{ role: "user", parts: [{ text }] }], ...extra };
}

/** POSTs JSON to a content endpoint with the given headers. */
export function postContent(gw: TestGateway, path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${gw.url}/v1beta/models/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}
