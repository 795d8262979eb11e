import { describe, expect, it } from "vitest";
import { notePoolSecrets, withoutSecret } from "./secret-scrub.js";

const KEY = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0f";

/** Each character of `text` as a JSON escape, written out as text. */
const jsonEscaped = (text: string) =>
  [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
const percentEncoded = (text: string) =>
  [...Buffer.from(text)].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("");

describe("a channel key in an upstream's text", () => {
  it.each([
    ["masked in its middle", `Incorrect API key provided: ${KEY.slice(0, 12)}${"*".repeat(20)}${KEY.slice(-6)}.`],
    ["masked after its prefix", `Incorrect API key provided: sk-proj-${"*".repeat(30)}${KEY.slice(-4)}.`],
    ["masked with dots", `Incorrect API key provided: ${KEY.slice(0, 10)}...${KEY.slice(-4)}.`],
  ])("is blanked whole when %s", (_how, text) => {
    expect(withoutSecret(text, KEY)).toBe("Incorrect API key provided: [redacted].");
  });

  it.each([
    ["as it is", (run: string) => run],
    ["spaced out", (run: string) => [...run].join(" ")],
    ["split by an escaped line break", (run: string) => `${run.slice(0, 3)}\\n${run.slice(3)}`],
    ["URL-encoded", percentEncoded],
    ["URL-encoded in capitals", (run: string) => percentEncoded(run).toUpperCase()],
    ["JSON-escaped", jsonEscaped],
    [
      "half URL-encoded, half JSON-escaped",
      (run: string) => percentEncoded(run.slice(0, 4)) + jsonEscaped(run.slice(4)),
    ],
    ["in hex", (run: string) => Buffer.from(run).toString("hex")],
    ["in hex capitals", (run: string) => Buffer.from(run).toString("hex").toUpperCase()],
  ])("loses every run of 8 of its characters given %s", (_how, encode) => {
    for (let i = 0; i + 8 <= KEY.length; i++) {
      const text = `before ${encode(KEY.slice(i, i + 8))} after`;
      expect(withoutSecret(text, KEY), text).toBe("before [redacted] after");
    }
  });

  it("loses every run of 8 of its characters in base64 and base64url, at any alignment", () => {
    for (let i = 0; i + 8 <= KEY.length; i++) {
      for (const lead of ["", "a", "ab"]) {
        for (const encoding of ["base64", "base64url"] as const) {
          const encoded = Buffer.from(`${lead}${KEY.slice(i, i + 8)}`).toString(encoding);
          const scrubbed = withoutSecret(`seen: ${encoded}`, KEY);
          expect(scrubbed, encoded).toContain("[redacted]");
          // What is left of the copy is at most the two partial characters at its ends and padding.
          expect(
            scrubbed.replace("seen: ", "").replace("[redacted]", "").replace(/=+$/, "").length,
          ).toBeLessThanOrEqual(Math.ceil((8 * lead.length) / 6) + 2);
        }
      }
    }
  });

  it("leaves text that holds no run of 8 of its characters as it is", () => {
    const text = `model gemini-2.5-flash refused: quota 429; ${KEY.slice(0, 7)} and ${KEY.slice(20, 27)} are shorter`;
    expect(withoutSecret(text, KEY)).toBe(text);
    // A mask after no run of the key is no masked copy of it.
    expect(withoutSecret(`sk-other****${KEY.slice(-4)}`, KEY)).toBe(`sk-other****${KEY.slice(-4)}`);
  });

  it("blanks a short key only whole", () => {
    expect(withoutSecret("keys abcde and abcdef", "abcdef")).toBe("keys abcde and [redacted]");
    expect(withoutSecret("key abc", "abc")).toBe("key abc");
  });
});

describe("pool keys", () => {
  it("blanks every key of a pool when one of them is scrubbed", () => {
    const pool = ["pool-key-one-0123456789", "pool-key-two-abcdefghij", "pool-key-three-klmnopqr"];
    notePoolSecrets(pool);
    const text = `refused ${pool[1]} and ${pool[2]}; sent ${pool[0]}`;
    const out = withoutSecret(text, pool[0]);
    for (const key of pool) expect(out).not.toContain(key.slice(-8));
    expect(out).toContain("refused");
  });
});
