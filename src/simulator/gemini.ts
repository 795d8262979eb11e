import type { FastifyInstance } from "fastify";
import type { SimulatorState } from "./server.js";

/** Settings of the simulated `gemini` upstream. */
export type GeminiSimOptions = Record<string, never>;

/** The `gemini` protocol of the simulator. */
export async function geminiSimulator(_app: FastifyInstance, _opts: { state: SimulatorState }) {}
