import type { FastifyInstance } from "fastify";
import type { SimulatorState } from "./server.js";

/** Settings of the simulated `openai-images` upstream. */
export type OpenAiImagesSimOptions = Record<string, never>;

/** The `openai-images` protocol of the simulator. */
export async function openAiImagesSimulator(_app: FastifyInstance, _opts: { state: SimulatorState }) {}
