import { describe, expect, it } from "vitest";
import { parseImageReference } from "./image-input.js";

/** A complete 1x1 PNG. */
const png = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

describe("image references", () => {
  it("decodes a PNG data URL and trusts the bytes over the declared type", () => {
    const ref = parseImageReference("image", `data:image/jpeg;base64,${png.toString("base64")}`, 1_000_000);
    expect(ref).toMatchObject({ kind: "inline", image: { mimeType: "image/png" } });
  });

  it("keeps http(s) URLs for the guarded fetch", () => {
    expect(parseImageReference("image", "https://example.com/a.png?x=1", 10)).toEqual({
      kind: "url",
      url: "https://example.com/a.png?x=1",
    });
  });

  it.each([
    ["iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB", "raw base64"],
    ["data:image/png,notbase64", "base64 data URL"],
    ["data:image/png;base64,@@@@", "invalid base64"],
    ["ftp://example.com/a.png", "http(s) URL"],
    ["just words", "http(s) URL"],
  ])("refuses %j", (value, message) => {
    expect(() => parseImageReference("image[0]", value, 1_000_000)).toThrow(message);
  });
});
