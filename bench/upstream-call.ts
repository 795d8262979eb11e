/**
 * The upstream call alone, measured in one process: CPU per call of the two ways the gateway can
 * make a call and read its answer, against the minimal upstream (in a process of its own), so that
 * nothing else of the gateway (the ledger, the client's side) moves the figure.
 *
 *   request  undici's `request` (a readable stream per answer), read through `bodyChunks`
 *   direct   the pool's `dispatch` (`callUpstreamForText` for an answer read whole,
 *            `callUpstreamStreaming` for a stream read chunk by chunk)
 *
 * Usage: node --import tsx bench/upstream-call.ts [--calls 20000] [--rounds 6] [--connections 32]
 * The rounds alternate the two ways (and which goes first); each prints µs of CPU per call.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { callUpstreamForText, callUpstreamStreaming } from "../src/upstreams/direct-call.js";
import { SseByteDecoder } from "../src/upstreams/gemini/sse-reader.js";
import { bodyChunks, type ChunkedAnswer, callUpstream, type UpstreamCall } from "../src/upstreams/http.js";
import { cpuPerCall, median } from "./load.js";
import { ChildProcesses, startMinimalUpstream } from "./processes.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

type Way = "request" | "direct";
type Kind = "whole" | "stream";

async function readWhole(res: ChunkedAnswer): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of bodyChunks(res.body)) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

async function readEvents(res: ChunkedAnswer): Promise<number> {
  const decoder = new SseByteDecoder();
  let events = 0;
  for await (const chunk of bodyChunks(res.body)) events += decoder.push(chunk).length;
  return events + decoder.finish().length;
}

async function oneCall(way: Way, kind: Kind, call: UpstreamCall): Promise<void> {
  if (kind === "whole") {
    const text = way === "direct" ? (await callUpstreamForText(call)).text : await readWhole(await callUpstream(call));
    if (!text.includes("usageMetadata")) throw new Error("unexpected answer");
    return;
  }
  const res = way === "direct" ? await callUpstreamStreaming(call) : await callUpstream(call);
  if ((await readEvents(res)) === 0) throw new Error("no events");
}

/** CPU µs of this process per call, for `calls` calls `connections` at a time. */
function round(way: Way, kind: Kind, call: UpstreamCall, calls: number, connections: number): Promise<number> {
  return cpuPerCall(calls, connections, () => oneCall(way, kind, call));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      calls: { type: "string", default: "20000" },
      rounds: { type: "string", default: "6" },
      connections: { type: "string", default: "32" },
    },
  });
  const calls = Number(values.calls);
  const rounds = Number(values.rounds);
  const connections = Number(values.connections);
  const children = new ChildProcesses();
  try {
    const upstream = await startMinimalUpstream(children, ROOT, "/dev/null");
    const base = `${upstream.url}/v1beta/models/bench-model`;
    const calls_: Record<Kind, UpstreamCall> = {
      whole: { method: "POST", url: `${base}:generateContent`, jsonText: '{"contents":[]}' },
      stream: { method: "POST", url: `${base}:streamGenerateContent?alt=sse`, jsonText: '{"contents":[]}' },
    };
    for (const kind of ["whole", "stream"] as const) {
      const results: Record<Way, number[]> = { request: [], direct: [] };
      // Warm both ways up before anything is counted.
      for (const way of ["request", "direct"] as const) await round(way, kind, calls_[kind], calls / 4, connections);
      const ratios: number[] = [];
      for (let r = 0; r < rounds; r++) {
        const order: Way[] = r % 2 === 0 ? ["request", "direct"] : ["direct", "request"];
        for (const way of order) results[way].push(await round(way, kind, calls_[kind], calls, connections));
        ratios.push((results.direct.at(-1) as number) / (results.request.at(-1) as number));
        process.stdout.write(
          `${kind} round ${r + 1}: request ${results.request.at(-1)?.toFixed(1)} µs, direct ${results.direct.at(-1)?.toFixed(1)} µs per call\n`,
        );
      }
      process.stdout.write(
        `${kind}: median request ${median(results.request).toFixed(1)} µs, direct ${median(results.direct).toFixed(1)} µs; per round direct/request median ${median(ratios).toFixed(3)}, lower in ${ratios.filter((x) => x < 1).length} of ${rounds}\n`,
      );
    }
  } finally {
    await children.stopAll();
  }
}

await main();
