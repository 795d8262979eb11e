/**
 * The upstream simulator for the task loads, as a process of its own: its tasks finish
 * BENCH_COMPLETE_MS after their submit (long by default, so that the gateway's polls stay few while
 * submits are measured). Listens on 127.0.0.1 and tells its parent its URL.
 */
import { startSimulator } from "../src/simulator/server.js";
import { announceReady, stopOnSignal } from "./child-process-ipc.js";

const completeAfterMs = Number(process.env.BENCH_COMPLETE_MS ?? 600_000);
const sim = await startSimulator({
  host: "127.0.0.1",
  port: 0,
  seed: 1,
  taskRelay: { completeAfterMs },
  generateRecord: { completeAfterMs },
});
// The simulator keeps every request for tests to inspect; a benchmark only needs none of them.
const forget = setInterval(() => {
  sim.received.length = 0;
}, 250);
stopOnSignal(async () => {
  clearInterval(forget);
  await sim.close();
});
announceReady({ url: sim.url });
