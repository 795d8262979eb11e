import type { CallableChannel, MeteredCall, MeteringDeps } from "../metering/ports.js";
import type { TokenPrice } from "../pricing.js";

/** One input to embed: text, or the token ids of a tokenizer the upstream model shares. */
export type EmbeddingInput = { text: string; title?: string } | { tokens: number[] };

/** An embeddings request in the gateway's one form, whichever surface it came from. */
export interface EmbeddingsRequest {
  inputs: EmbeddingInput[];
  /** The length of each vector asked for; null: the model's own. */
  dimensions: number | null;
  /** OpenAI's end-user id (sent to upstreams that take it). */
  user: string | null;
  /** Gemini's task type (`RETRIEVAL_QUERY`...): it changes the vectors (as an input's `title` does). */
  taskType: string | null;
}

/** What an upstream answers: one vector per input, in order, and the tokens it counted if it says. */
export interface EmbeddingsAnswer {
  vectors: number[][];
  /** Input tokens the upstream reported; null when it reports none (Gemini). */
  promptTokens: number | null;
}

/** Why an upstream cannot carry a request as asked: the client's field, and why. */
export interface EmbeddingsRefusal {
  field: string;
  reason: string;
}

/** One upstream protocol of embeddings, as an adapter implements it; failures are UpstreamErrors. */
export interface EmbeddingsUpstream<C> {
  /** Null when the protocol carries the request as it is; else the field it cannot. */
  untranslatable(request: EmbeddingsRequest): EmbeddingsRefusal | null;
  embed(channel: C, upstreamModel: string, request: EmbeddingsRequest, signal: AbortSignal): Promise<EmbeddingsAnswer>;
}

/** A channel as the embeddings relay sees it. */
export interface EmbeddingsChannel extends CallableChannel {
  type: string;
}

/** One embeddings call: who asks, for which model, with which request, and how its fields are named. */
export interface EmbeddingsCall extends MeteredCall {
  request: EmbeddingsRequest;
  /** The surface's name of the inputs' field, for refusals (`input`, `requests`). */
  inputField: string;
}

/** Everything the embeddings relay uses: a metered call's ports and each channel's protocol. */
export interface EmbeddingsRelayDeps<C extends EmbeddingsChannel> extends MeteringDeps<C, TokenPrice> {
  upstreamFor(channel: C): EmbeddingsUpstream<C>;
}
