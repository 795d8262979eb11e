import { describe, expect, it } from "vitest";
import { findImageModel, IMAGE_MODELS } from "./catalog.js";

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
});
