import { describe, expect, it } from "vitest";
import { findUnacceptableText, isUnstorableText, jsonNestsDeeperThan } from "../../src/http/input-bounds.js";

describe("JSON depth, measured on the text before parsing", () => {
  it.each([
    ["[]", 1, false],
    ["[[]]", 1, true],
    ['{"a":{"b":[1]}}', 3, false],
    ['{"a":{"b":[1]}}', 2, true],
    // Brackets inside strings are text, however the string escapes its quotes and backslashes.
    ['{"a":"[[[[[["}', 1, false],
    ['{"a":"x\\"[[[[["}', 1, false],
    ['{"a":"\\\\"}', 1, false],
    ['{"a":"\\\\","b":[[1]]}', 2, true],
    ['{"a":"\\\\\\"[[["}', 1, false],
    ['[[["]]]"]]]', 2, true],
    // Unterminated: left for the parser to refuse.
    ['{"a":"[[[[', 1, false],
  ] as const)("%s with a limit of %i: deeper = %s", (text, limit, deeper) => {
    expect(jsonNestsDeeperThan(text, limit)).toBe(deeper);
    if (!deeper && text.endsWith("}")) expect(() => JSON.parse(text)).not.toThrow();
  });

  it("agrees with the parsed value's depth on random nestings", () => {
    const depthOf = (v: unknown): number =>
      Array.isArray(v)
        ? 1 + Math.max(0, ...v.map(depthOf))
        : v && typeof v === "object"
          ? 1 + Math.max(0, ...Object.values(v).map(depthOf))
          : 0;
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const make = (d: number): unknown =>
      d === 0 ? (next() < 0.5 ? 'q"[{\\' : 1) : next() < 0.5 ? [make(d - 1), "]"] : { "}": make(d - 1), k: "[[" };
    for (let i = 0; i < 200; i++) {
      const value = make(Math.floor(next() * 12));
      const text = JSON.stringify(value);
      const depth = depthOf(value);
      expect(jsonNestsDeeperThan(text, depth)).toBe(false);
      if (depth > 0) expect(jsonNestsDeeperThan(text, depth - 1)).toBe(true);
    }
  });
});

describe("text a store cannot hold", () => {
  it.each([
    ["a\u0000b", true],
    ["\ud800", true],
    ["x\udfff", true],
    ["\ude00\ud83d", true],
    ["\ud83d\ude00", false],
    ["plain", false],
    ["", false],
  ])("%j: %s", (text, unstorable) => {
    expect(isUnstorableText(text)).toBe(unstorable);
  });

  it("names the first field holding it, keys included", () => {
    expect(findUnacceptableText({ a: [{ b: "ok" }, { c: "x\u0000" }] }, "body")).toEqual({
      field: "body.a[1].c",
      reason: "contains a NUL character or an unpaired surrogate",
    });
    expect(findUnacceptableText({ "\ud800": 1 }, "body")?.reason).toMatch(/field name/);
    expect(findUnacceptableText(JSON.parse('{"__proto__": {"x": 1}}'), "body")?.field).toBe("body.__proto__");
    expect(findUnacceptableText({ a: ["fine", { b: 2 }] }, "body")).toBeNull();
    expect(findUnacceptableText({ "a b": [0, { c: ["x\udfff"] }] }, "body")?.field).toBe('body["a b"][1].c[0]');
    expect(findUnacceptableText({ a: [{ "\u0000": 1 }] }, "body")?.field).toBe("body.a[0]");
    expect(findUnacceptableText("a\u0000", "params")?.field).toBe("params");
  });
});
