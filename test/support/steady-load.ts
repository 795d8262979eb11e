import type { ReportedUsage } from "../../src/simulator/server.js";

/** One call the load made, as its client saw it. */
export interface LoadCall {
  /** The X-Request-Id the client sent (the gateway logs the call under it). */
  id: string;
  /** Carried in the prompt as `#tag#`, so that the simulator's record of the call can be found. */
  tag: string;
  kind: "content" | "stream" | "models";
  /** The HTTP status, or 0 when no answer came (refused, reset, timed out). */
  status: number;
  /** Why the call failed, when it did: no answer, a status other than 200, a body cut short. */
  failure: string | null;
  /** A stream: its last event finished the answer (finishReason), with no error event. */
  completed: boolean;
  /** The last usageMetadata the client received: what it was delivered. */
  lastUsage: ReportedUsage | null;
}

export interface LoadOptions {
  /** Where the calls go (a balancer, or one gateway). */
  url: string;
  /** The token of the user the calls are billed to. */
  key: string;
  model: string;
  /** Clients sending short calls one after another (content answers, and a model list now and then). */
  clients: number;
  /** Clients sending slow streams one after another. */
  streams: number;
  /** Chunks of each stream (the simulator sends one every 200 ms for a `[slow]` prompt). */
  streamChunks: number;
  /** Prefix of the calls' ids and tags. */
  prefix: string;
}

/** A load running until stop(); then every call's outcome. */
export interface SteadyLoad {
  calls: LoadCall[];
  stop(): Promise<LoadCall[]>;
}

const CALL_TIMEOUT_MS = 30_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The JSON of each `data:` event of a server-sent events body. */
function sseEvents(text: string): unknown[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((e) => e.trim())
    .filter((e) => e.startsWith("data: "))
    .map((e) => JSON.parse(e.slice("data: ".length)));
}

type Chunk = {
  usageMetadata?: ReportedUsage;
  candidates?: Array<{ finishReason?: string }>;
  error?: unknown;
};

async function oneCall(o: LoadOptions, kind: LoadCall["kind"], n: number): Promise<LoadCall> {
  const id = `${o.prefix}-${kind}-${n}`;
  const call: LoadCall = { id, tag: id, kind, status: 0, failure: null, completed: false, lastUsage: null };
  const headers = { "x-goog-api-key": o.key, "x-request-id": id, "content-type": "application/json" };
  const base = `${o.url}/v1beta/models`;
  try {
    let res: Response;
    if (kind === "models") {
      res = await fetch(base, { headers, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
    } else {
      const stream = kind === "stream";
      const text = stream ? `#${id}# [slow] [chunks=${o.streamChunks}] a story told slowly` : `#${id}# say something`;
      res = await fetch(`${base}/${o.model}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`, {
        method: "POST",
        headers,
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text }] }] }),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
    }
    call.status = res.status;
    const body = await res.text();
    if (res.status !== 200) {
      call.failure = `${res.status} ${body.slice(0, 300)}`;
      return call;
    }
    if (kind === "models") {
      call.completed = Array.isArray((JSON.parse(body) as { models?: unknown }).models);
      if (!call.completed) call.failure = `no model list: ${body.slice(0, 300)}`;
      return call;
    }
    const chunks = (kind === "stream" ? sseEvents(body) : [JSON.parse(body)]) as Chunk[];
    for (const chunk of chunks) if (chunk.usageMetadata) call.lastUsage = chunk.usageMetadata;
    const last = chunks.at(-1);
    call.completed = !last?.error && Boolean(last?.candidates?.[0]?.finishReason);
    // A stream cut short (an error event) is no failure of the call if it was billed for what it
    // delivered; an answer that is not whole otherwise is.
    if (!call.completed && !(kind === "stream" && last?.error))
      call.failure = `not a whole answer: ${body.slice(-300)}`;
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    call.failure = `no answer: ${(err as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ""}`;
  }
  return call;
}

/**
 * A constant load: `clients` loops of short calls (a content answer, every third one a model list)
 * and `streams` loops of slow streams, each loop one call at a time, until stop().
 */
export function startSteadyLoad(o: LoadOptions): SteadyLoad {
  const calls: LoadCall[] = [];
  let running = true;
  let n = 0;
  const loop = async (pick: (i: number) => LoadCall["kind"]) => {
    for (let i = 0; running; i++) {
      calls.push(await oneCall(o, pick(i), n++));
      // A short pause keeps the rate bounded on a small machine.
      await sleep(10);
    }
  };
  const loops = [
    ...Array.from({ length: o.clients }, () => loop((i) => (i % 3 === 2 ? "models" : "content"))),
    ...Array.from({ length: o.streams }, () => loop(() => "stream")),
  ];
  return {
    calls,
    async stop() {
      running = false;
      await Promise.all(loops);
      return calls;
    },
  };
}
