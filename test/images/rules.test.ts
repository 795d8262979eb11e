import { describe, expect, it } from "vitest";
import { findImageModel, IMAGE_MODELS } from "../../src/core/images/catalog.js";
import { parseImageReference } from "../../src/core/images/image-input.js";
import { pixelSize } from "../../src/core/images/pixel-size.js";
import { normalizeImagePrompt } from "../../src/core/images/prompt.js";
import { solidPng } from "../../src/simulator/gemini-image.js";
import { readPng } from "./harness.js";

describe("image model catalog", () => {
  it("derives tier and imageSize from the name alone", () => {
    expect(IMAGE_MODELS.map((m) => [m.name, m.imageSize])).toEqual([
      ["image-model", null],
      ["image-model-pro-1k", "1K"],
      ["image-model-pro-2k", "2K"],
      ["image-model-pro-4k", "4K"],
      ["image-model-2-0.5k", "512"],
      ["image-model-2-1k", "1K"],
      ["image-model-2-2k", "2K"],
      ["image-model-2-4k", "4K"],
    ]);
    expect(findImageModel("image-model-pro-8k")).toBeNull();
    expect(findImageModel("IMAGE-MODEL")?.name).toBe("image-model");
    expect(findImageModel("image-model-pro-2K")).toBe(findImageModel("image-model-pro-2k"));
  });

  it("gives the extra ratios to the image-model-2 family only", () => {
    for (const m of IMAGE_MODELS) {
      expect(m.aspectRatios.includes("8:1")).toBe(m.family === "image-model-2");
      expect(m.aspectRatios).toContain("21:9");
    }
  });

  it("scales the pixel table by tier", () => {
    expect(pixelSize("1K", "16:9")).toEqual({ width: 1344, height: 768 });
    expect(pixelSize("2K", "16:9")).toEqual({ width: 2688, height: 1536 });
    expect(pixelSize("4K", "16:9")).toEqual({ width: 5376, height: 3072 });
    expect(pixelSize("512", "16:9")).toEqual({ width: 672, height: 384 });
    expect(pixelSize(null, null)).toEqual({ width: 1024, height: 1024 });
    expect(pixelSize("1K", "7:5")).toBeNull();
  });
});

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

describe("image references", () => {
  const png = solidPng(4, 4);
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

describe("simulated PNGs", () => {
  it("are complete PNGs even at the largest size", () => {
    const size = pixelSize("4K", "8:1") ?? { width: 0, height: 0 };
    const png = solidPng(size.width, size.height);
    expect(readPng(png)).toEqual(size);
    expect(png.length).toBeLessThan(200_000);
  });
});
