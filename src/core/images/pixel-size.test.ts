import { describe, expect, it } from "vitest";
import { pixelSize } from "./pixel-size.js";

describe("pixel sizes", () => {
  it("scales the pixel table by tier", () => {
    expect(pixelSize("1K", "16:9")).toEqual({ width: 1344, height: 768 });
    expect(pixelSize("2K", "16:9")).toEqual({ width: 2688, height: 1536 });
    expect(pixelSize("4K", "16:9")).toEqual({ width: 5376, height: 3072 });
    expect(pixelSize("512", "16:9")).toEqual({ width: 672, height: 384 });
    expect(pixelSize(null, null)).toEqual({ width: 1024, height: 1024 });
    expect(pixelSize("1K", "7:5")).toBeNull();
  });
});
