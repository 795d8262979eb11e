import { describe, expect, it } from "vitest";
import { pixelSize } from "../../src/core/images/pixel-size.js";
import { solidPng } from "../../src/simulator/gemini-image.js";
import { readPng } from "./harness.js";

describe("simulated PNGs", () => {
  it("are complete PNGs even at the largest size", () => {
    const size = pixelSize("4K", "8:1") ?? { width: 0, height: 0 };
    const png = solidPng(size.width, size.height);
    expect(readPng(png)).toEqual(size);
    expect(png.length).toBeLessThan(200_000);
  });
});
