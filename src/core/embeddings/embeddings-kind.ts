import { GatewayError } from "../errors.js";
import type { CallKind, MeteredAccount, Settlement } from "../metering/call-kind.js";
import { meterOnce } from "../metering/once.js";
import { explainTokenHold, tokenPriced } from "../metering/token-priced.js";
import type { TokenPrice } from "../pricing.js";
import { type TokenUsage, tokenUsage } from "../token-usage.js";
import { UpstreamError } from "../upstream-error.js";
import type {
  EmbeddingsAnswer,
  EmbeddingsCall,
  EmbeddingsChannel,
  EmbeddingsRefusal,
  EmbeddingsRelayDeps,
  EmbeddingsRequest,
} from "./ports.js";
import { embeddingTokenBound, embeddingTokenCount } from "./request.js";

/** What an embeddings answer produced: its vectors, and the tokens its upstream reported. */
export class EmbeddingsAccount implements MeteredAccount<never, EmbeddingsAnswer> {
  answered = false;
  reported: number | null = null;
  complete = false;

  observe(): void {}

  observeAnswer(answer: EmbeddingsAnswer): void {
    this.answered = answer.vectors.length > 0;
    this.complete = true;
    // A report of no tokens for inputs that were embedded is no report.
    this.reported = answer.promptTokens !== null && answer.promptTokens > 0 ? answer.promptTokens : null;
  }
}

export type EmbeddingsKind<C> = CallKind<
  EmbeddingsCall,
  EmbeddingsRequest,
  TokenPrice,
  TokenUsage,
  EmbeddingsAccount,
  C
>;

const usageOf = (promptTokens: number): TokenUsage => tokenUsage({ input: promptTokens });

/**
 * Settled to the input tokens the upstream reported, else to the gateway's count of them (an
 * upstream that reports none, Gemini's); an answer with no vector is refunded.
 */
function settlement(account: EmbeddingsAccount, count: number): Settlement<TokenUsage> {
  if (!account.answered) return { kind: "refund", note: "nothing was produced" };
  if (account.reported !== null) return { kind: "settle", usage: usageOf(account.reported), note: "reported usage" };
  return { kind: "settle", usage: usageOf(count), note: "input tokens counted by the gateway" };
}

/**
 * The channels whose protocol carries the request as asked, at most as many as may be tried;
 * when channels exist but none can, the client's field is named in a 400.
 */
function carrying<C extends EmbeddingsChannel>(
  deps: EmbeddingsRelayDeps<C>,
  ordered: C[],
  call: EmbeddingsCall,
  attempts: number,
): C[] {
  const usable: C[] = [];
  let refusal: EmbeddingsRefusal | null = null;
  for (const channel of ordered) {
    const why = deps.upstreamFor(channel).untranslatable(call.request);
    if (why) refusal ??= why;
    else usable.push(channel);
  }
  if (usable.length === 0 && refusal) {
    const field = refusal.field === "input" ? call.inputField : refusal.field;
    throw new GatewayError("GW_ERR_VALIDATION", `${field}: ${refusal.reason}`, { param: field });
  }
  return usable.slice(0, Math.max(1, attempts));
}

/** How a surface says a model is unknown. */
export type UnknownModel = (model: string) => GatewayError;

/**
 * An embeddings call: it holds every input byte as a token at the model's input rate (at the
 * highest ratio of the channels that can carry it) and settles to the input tokens used.
 */
export function embeddingsKind<C extends EmbeddingsChannel>(
  deps: EmbeddingsRelayDeps<C>,
  unknownModel: UnknownModel,
): EmbeddingsKind<C> {
  return {
    ...tokenPriced({ input: "input", asker: "The request", param: "input", lower: "fewer or shorter inputs lower it" }),
    label: "embeddings",
    unknownModel,
    explainRefusedHold: (err, amount, worst) =>
      explainTokenHold(err, amount, `${worst.input} input tokens at most`, "fewer or shorter inputs lower it"),
    narrow: (ordered, call, attempts) => carrying(deps, ordered, call, attempts),
    worstCase: (call) => usageOf(embeddingTokenBound(call.request)),
    estimate: (call) => embeddingTokenCount(call.request),
    upstreamRequest: (call) => call.request,
    account: () => new EmbeddingsAccount(),
    settlement,
  };
}

/** The answer of an embeddings call: the vectors, and the input tokens billed. */
export interface EmbeddingsResult {
  vectors: number[][];
  promptTokens: number;
}

/**
 * Embeds the request's inputs on one of the model's channels (with failover), held before the
 * upstream call and settled to the input tokens used (refunded when the call fails).
 */
export async function createEmbeddings<C extends EmbeddingsChannel>(
  deps: EmbeddingsRelayDeps<C>,
  kind: EmbeddingsKind<C>,
  call: EmbeddingsCall,
): Promise<EmbeddingsResult> {
  const { answer, usage } = await meterOnce(
    deps,
    kind,
    call,
    (channel, model, request, signal) => deps.upstreamFor(channel).embed(channel, model, request, signal),
    async (answer) => {
      const asked = call.request.inputs.length;
      if (answer.vectors.length !== asked) {
        throw new UpstreamError("retryable", `upstream answered ${answer.vectors.length} vectors for ${asked} inputs`);
      }
      return answer;
    },
  );
  return { vectors: answer.vectors, promptTokens: usage?.input ?? 0 };
}
