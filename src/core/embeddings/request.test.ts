import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors.js";
import { EmbeddingsAccount, embeddingsKind } from "./embeddings-kind.js";
import type { EmbeddingsRequest } from "./ports.js";
import { checkEmbeddingsRequest, embeddingTokenBound, embeddingTokenCount, MAX_DIMENSIONS } from "./request.js";

const FIELDS = { inputs: "input", input: (i: number) => `input[${i}]`, dimensions: "dimensions", maxInputs: 3 };

function request(inputs: EmbeddingsRequest["inputs"], dimensions: number | null = null): EmbeddingsRequest {
  return { inputs, dimensions, user: null, taskType: null };
}

function refusal(req: EmbeddingsRequest): string | null {
  try {
    checkEmbeddingsRequest(req, FIELDS);
    return null;
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(400);
    return (err as GatewayError).param ?? null;
  }
}

describe("an embeddings request's checks", () => {
  it("names the field of each mistake, and takes what is right", () => {
    expect(refusal(request([]))).toBe("input");
    expect(refusal(request([{ text: "a" }, { text: "b" }, { text: "c" }, { text: "d" }]))).toBe("input");
    expect(refusal(request([{ text: "a" }, { text: "" }]))).toBe("input[1]");
    expect(refusal(request([{ tokens: [] }]))).toBe("input[0]");
    expect(refusal(request([{ tokens: [1, -2] }]))).toBe("input[0]");
    expect(refusal(request([{ text: "a" }], 0))).toBe("dimensions");
    expect(refusal(request([{ text: "a" }], 2.5))).toBe("dimensions");
    expect(refusal(request([{ text: "a" }], MAX_DIMENSIONS + 1))).toBe("dimensions");
    expect(refusal(request([{ text: "a" }, { tokens: [0, 7] }], MAX_DIMENSIONS))).toBeNull();
  });

  it("holds a token per byte and two per input, and counts four characters a token", () => {
    const req = request([{ text: "héllo" }, { tokens: [1, 2, 3] }]);
    expect(embeddingTokenBound(req)).toBe(6 + 2 + 3 + 2);
    expect(embeddingTokenCount(req)).toBe(2 + 3);
    // The bound is never below the count, whatever the text.
    for (const text of ["a", "日本語のテキスト", "x".repeat(1001)]) {
      const one = request([{ text }]);
      expect(embeddingTokenBound(one)).toBeGreaterThanOrEqual(embeddingTokenCount(one));
    }
  });
});

describe("an embeddings call's settlement", () => {
  const kind = embeddingsKind(
    { upstreamFor: () => ({}) } as never,
    (model) => new GatewayError("GW_ERR_NOT_FOUND", model),
  );

  it("settles to the reported tokens, else to the gateway's count, and refunds when nothing came", () => {
    const call = {} as never;
    const reported = new EmbeddingsAccount();
    reported.observeAnswer({ vectors: [[1]], promptTokens: 7 });
    expect(kind.settlement(reported, 3, call)).toMatchObject({ kind: "settle", usage: { input: 7, output: 0 } });
    const unreported = new EmbeddingsAccount();
    unreported.observeAnswer({ vectors: [[1]], promptTokens: null });
    expect(kind.settlement(unreported, 3, call)).toMatchObject({ kind: "settle", usage: { input: 3, output: 0 } });
    const zero = new EmbeddingsAccount();
    zero.observeAnswer({ vectors: [[1]], promptTokens: 0 });
    expect(kind.settlement(zero, 3, call)).toMatchObject({ kind: "settle", usage: { input: 3, output: 0 } });
    expect(kind.settlement(new EmbeddingsAccount(), 3, call)).toMatchObject({ kind: "refund" });
  });
});
