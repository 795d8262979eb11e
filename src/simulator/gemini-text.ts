import type { GeminiSimRequest } from "./gemini.js";

/** Settings of the simulated Gemini text models. */
export type GeminiTextSimOptions = Record<string, never>;

/** Answers a Gemini text request, synchronous or streaming. */
export async function answerGeminiText(sim: GeminiSimRequest) {
  return sim.reply.status(501).send({ error: { code: 501, message: "not simulated yet", status: "UNIMPLEMENTED" } });
}
