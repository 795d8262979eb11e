import { describe, expect, it } from "vitest";
import { normalizeImagePrompt } from "./prompt.js";

describe("prompt normalization", () => {
  it.each([
    ["  a cat  ", "a cat"],
    ["a\t\tcat", "a cat"],
    ["line one\r\nline two", "line one\nline two"],
    ["a\n\n\n\n\nb", "a\n\nb"],
    ["cafe\u0301", "café"],
    ["bell\u0007 here", "bell here"],
    ["  \n \t ", ""],
  ])("%j becomes %j", (input, output) => {
    expect(normalizeImagePrompt(input)).toBe(output);
  });
});
