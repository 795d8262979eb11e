import type { FastifyInstance } from "fastify";
import type { SimulatorState } from "./server.js";

/** Settings of the simulated `task-relay` upstream. */
export type TaskRelaySimOptions = Record<string, never>;

/** The `task-relay` protocol of the simulator. */
export async function taskRelaySimulator(_app: FastifyInstance, _opts: { state: SimulatorState }) {}
