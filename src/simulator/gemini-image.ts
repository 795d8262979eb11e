import type { GeminiSimRequest } from "./gemini.js";

/** Settings of the simulated Gemini image models. */
export type GeminiImageSimOptions = Record<string, never>;

/** Answers a Gemini request that asks for the IMAGE modality. */
export async function answerGeminiImage(sim: GeminiSimRequest) {
  return sim.reply.status(501).send({ error: { code: 501, message: "not simulated yet", status: "UNIMPLEMENTED" } });
}
