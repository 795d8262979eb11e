/**
 * A streamed answer's writes, alone: CPU per answer of an HTTP server that writes 8 server-sent
 * events in one turn and ends the answer, the way the gateway's stream sinks write (`TurnWrites`:
 * the text of a turn joined into one write) against one write per event with the socket corked
 * for the turn (how the sinks wrote before). The client (undici, 32 connections) runs in the same
 * process, the same for both ways: the difference of the two figures is the server's.
 *
 * Usage: node --import tsx bench/sse-writes.ts [--answers 20000] [--rounds 6]
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { Pool } from "undici";
import { TurnWrites } from "../src/api/turn-writes.js";
import { cpuPerCall, median } from "./load.js";

const { values } = parseArgs({
  options: { answers: { type: "string", default: "20000" }, rounds: { type: "string", default: "6" } },
});
const answers = Number(values.answers);
const rounds = Number(values.rounds);
const CONNECTIONS = 32;

const EVENTS = ["", "Hello", " there,", " friend,", " how are", " you?", "", ""].map(
  (content) =>
    `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"bench","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"logprobs":null,"finish_reason":null}]}`,
);

/** The writes as they were: one `write` per event, the socket corked until the turn's end. */
function perEvent(res: http.ServerResponse): void {
  const socket = res.socket;
  socket?.cork();
  const uncork = setImmediate(() => socket?.uncork());
  for (const data of EVENTS) res.write(`data: ${data}\n\n`);
  res.write("data: [DONE]\n\n");
  res.end();
  clearImmediate(uncork);
  socket?.uncork();
}

function perTurn(res: http.ServerResponse): void {
  const turn = new TurnWrites(res);
  for (const data of EVENTS) void turn.write(`data: ${data}\n\n`);
  void turn.write("data: [DONE]\n\n");
  turn.end();
}

const ways = { "one write per event": perEvent, "one write per turn": perTurn } as const;
type Way = keyof typeof ways;

const server = http.createServer((req, res) => {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
  ways[decodeURIComponent((req.url ?? "/").slice(1)) as Way](res);
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: CONNECTIONS });

function round(way: Way, count: number): Promise<number> {
  return cpuPerCall(count, CONNECTIONS, async () => {
    const res = await pool.request({ method: "GET", path: `/${encodeURIComponent(way)}` });
    const text = await res.body.text();
    if (!text.endsWith("data: [DONE]\n\n")) throw new Error("answer cut short");
  });
}

const names = Object.keys(ways) as Way[];
const results = new Map<Way, number[]>(names.map((n) => [n, []]));
for (const way of names) await round(way, answers / 4);
for (let r = 0; r < rounds; r++) {
  for (const way of r % 2 === 0 ? names : [...names].reverse()) results.get(way)?.push(await round(way, answers));
}
console.log(`µs of CPU per answer (server and client), median (min to max) of ${rounds} rounds of ${answers}:`);
for (const [way, figures] of results) {
  console.log(
    `  ${way.padEnd(22)} ${median(figures).toFixed(1)} (${Math.min(...figures).toFixed(1)} to ${Math.max(...figures).toFixed(1)})`,
  );
}
await pool.close();
server.close();
