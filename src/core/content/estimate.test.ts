import { describe, expect, it } from "vitest";
import { estimatePromptTokens, MEDIA_PART_TOKENS } from "./estimate.js";

describe("prompt estimate", () => {
  it("estimates the prompt from text at four characters a token plus a fixed amount per media part", () => {
    const body = {
      systemInstruction: { parts: [{ text: "1234" }] },
      contents: [
        { role: "user", parts: [{ text: "12345" }, { inlineData: { mimeType: "image/png", data: "AAAA" } }] },
        { role: "user", parts: [{ fileData: { fileUri: "gs://x" } }] },
      ],
    };
    expect(estimatePromptTokens(body)).toBe(3 + 2 * MEDIA_PART_TOKENS);
  });
});
