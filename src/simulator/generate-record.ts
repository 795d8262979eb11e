import type { FastifyInstance } from "fastify";
import type { SimulatorState } from "./server.js";

/** Settings of the simulated `generate-record` upstream. */
export type GenerateRecordSimOptions = Record<string, never>;

/** The `generate-record` protocol of the simulator. */
export async function generateRecordSimulator(_app: FastifyInstance, _opts: { state: SimulatorState }) {}
