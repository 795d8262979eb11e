/**
 * The simulated upstream as a process of its own (so its RSS and CPU are its own): listens on
 * 127.0.0.1 on a free port and tells the parent its URL.
 */
import { startSimulator } from "../src/simulator/server.js";
import { announceReady, stopOnSignal } from "./child-process-ipc.js";

const sim = await startSimulator({ host: "127.0.0.1", port: 0, seed: 7 });
// The simulator keeps every request for tests to inspect; a benchmark only needs the count.
let handled = 0;
const forget = setInterval(() => {
  handled += sim.received.length;
  sim.received.length = 0;
}, 250);
process.on("message", (message: unknown) => {
  if ((message as { kind?: string })?.kind === "count") {
    process.send?.({ kind: "count", handled: handled + sim.received.length });
  }
});
stopOnSignal(async () => {
  clearInterval(forget);
  await sim.close();
});
announceReady({ url: sim.url });
