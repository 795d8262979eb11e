import { describe, expect, it } from "vitest";
import { forwardableText, keysInJsonText, keysInValue } from "../../src/api/gemini/forwardable-body.js";

describe("forwarding a client's JSON text", () => {
  it("counts the keys of JSON text, not the colons and quotes inside its strings", () => {
    const text = '{"a": "x: \\"y\\": z", "b" :{"c":[1, {"d\\\\": "e"}]}, "f": ["g:", "h"]}';
    expect(keysInJsonText(text)).toBe(5);
    expect(keysInValue(JSON.parse(text))).toBe(5);
    expect(keysInJsonText('["a", "b"]')).toBe(0);
    expect(keysInJsonText('"just a string: here"')).toBe(0);
  });

  it("forwards text that says what its parsed value says, and not text with a key given twice", () => {
    const once = '{ "contents": [ {"parts": [{"text": "caf\\u00e9"}]} ], "generationConfig": {"maxOutputTokens": 5} }';
    expect(forwardableText(once, JSON.parse(once))).toBe(once);
    const twice = '{"contents": [], "contents": [{"parts": [{"fileData": {"fileUri": "x"}}]}]}';
    expect(forwardableText(twice, JSON.parse(twice))).toBeUndefined();
    const nestedTwice = '{"contents": [{"parts": [{"text": "a", "text": "b"}]}]}';
    expect(forwardableText(nestedTwice, JSON.parse(nestedTwice))).toBeUndefined();
    const escapedTwice = '{"generationConfig": {}, "generation\\u0043onfig": {"candidateCount": 8}}';
    expect(forwardableText(escapedTwice, JSON.parse(escapedTwice))).toBeUndefined();
    expect(forwardableText(undefined, {})).toBeUndefined();
  });
});
