import { inflateSync } from "node:zlib";
import OpenAI from "openai";
import type { ConfigOverrides } from "../../src/config/load.js";
import { IMAGE_MODELS } from "../../src/core/images/catalog.js";
import type { GeminiImageReceived } from "../../src/simulator/gemini-image.js";
import type { OpenAiImagesReceived } from "../../src/simulator/openai-images.js";
import { type Simulator, type SimulatorOptions, startSimulator } from "../../src/simulator/server.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";

export const ALL_IMAGE_MODELS = IMAGE_MODELS.map((m) => m.name);

/** Width and height of a PNG, after checking that it is a complete, decodable PNG. */
export function readPng(bytes: Buffer): { width: number; height: number } {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (!bytes.subarray(0, 8).equals(signature)) throw new Error("not a PNG signature");
  let offset = 8;
  let width = 0;
  let height = 0;
  let bitsPerPixel = 0;
  const idat: Buffer[] = [];
  let ended = false;
  while (offset < bytes.length) {
    const length = bytes.readUInt32BE(offset);
    const type = bytes.toString("ascii", offset + 4, offset + 8);
    const data = bytes.subarray(offset + 8, offset + 8 + length);
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[data[9] as 0 | 2 | 3 | 4 | 6];
      bitsPerPixel = channels * (data[8] as number);
    }
    if (type === "IDAT") idat.push(data);
    if (type === "IEND") ended = true;
    offset += 12 + length;
  }
  if (!ended || width === 0) throw new Error("PNG has no IHDR or IEND");
  const raw = inflateSync(Buffer.concat(idat));
  const expected = height * (1 + Math.ceil((width * bitsPerPixel) / 8));
  if (raw.length !== expected) throw new Error(`PNG pixel data is ${raw.length} bytes, expected ${expected}`);
  return { width, height };
}

export function dataUrl(bytes: Buffer, mime = "image/png"): string {
  return `data:${mime};base64,${bytes.toString("base64")}`;
}

export interface ImageEnv {
  gw: TestGateway;
  sim: Simulator;
  /** Gemini channel serving every image model to the default group. */
  geminiChannelId: number;
  /** openai-images channel serving every image model to the group "oai", with a model mapping. */
  openAiChannelId: number;
  client(key: string): OpenAI;
  geminiCalls(): GeminiImageReceived[];
  openAiCalls(): OpenAiImagesReceived[];
  close(): Promise<void>;
}

/** A gateway on the given store with a simulator behind a gemini and an openai-images channel. */
export async function startImageEnv(
  kind: StoreKind,
  overrides: ConfigOverrides = {},
  simOptions: SimulatorOptions = {},
): Promise<ImageEnv> {
  const sim = await startSimulator(simOptions);
  const gw = await startTestGateway(kind, {
    logLevel: "warn",
    ...overrides,
    images: { maxImageBytes: 64 * 1024, ...overrides.images },
  });
  const geminiChannelId = await gw.createChannel({ type: "gemini", baseUrl: sim.url, models: ALL_IMAGE_MODELS });
  const openAiChannelId = await gw.createChannel({
    type: "openai-images",
    baseUrl: sim.url,
    models: ALL_IMAGE_MODELS,
    groups: ["oai"],
    modelMapping: { "image-model-2-1k": "vendor-image-2" },
  });
  return {
    gw,
    sim,
    geminiChannelId,
    openAiChannelId,
    client: (key) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 }),
    geminiCalls: () => sim.received.filter((r) => r.protocol === "gemini").map((r) => r.body as GeminiImageReceived),
    openAiCalls: () =>
      sim.received.filter((r) => r.protocol === "openai-images").map((r) => r.body as OpenAiImagesReceived),
    async close() {
      await gw.close();
      await sim.close();
    },
  };
}

/** Downloads a URL the gateway handed out and reads it as a PNG. */
export async function fetchPng(url: string): Promise<{ width: number; height: number; contentType: string | null }> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
  const size = readPng(Buffer.from(await res.arrayBuffer()));
  return { ...size, contentType: res.headers.get("content-type") };
}

/** Posts a raw JSON body to the images endpoint (for requests the typed client cannot send). */
export async function postImages(gw: TestGateway, key: string | null, body: unknown) {
  const res = await fetch(`${gw.url}/v1/images/generations`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** Generation parameters including the gateway's own fields, which the typed client does not list. */
export type GatewayImageParams = OpenAI.ImageGenerateParamsNonStreaming & {
  aspect_ratio?: string;
  image?: string | string[];
};

export function generate(client: OpenAI, params: GatewayImageParams) {
  return client.images.generate(params as OpenAI.ImageGenerateParamsNonStreaming);
}
