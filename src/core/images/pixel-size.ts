import type { ImageSize } from "./catalog.js";

/** Pixel size of a 1K image for each aspect ratio (the Gemini image models' table). */
const SIZES_1K: Record<string, readonly [number, number]> = {
  "1:1": [1024, 1024],
  "2:3": [832, 1248],
  "3:2": [1248, 832],
  "3:4": [864, 1184],
  "4:3": [1184, 864],
  "4:5": [896, 1152],
  "5:4": [1152, 896],
  "9:16": [768, 1344],
  "16:9": [1344, 768],
  "21:9": [1536, 672],
  // The extra ratios of the `-2-` family keep roughly the same pixel count as 1:1.
  "1:4": [512, 2048],
  "4:1": [2048, 512],
  "1:8": [384, 3072],
  "8:1": [3072, 384],
};

const SCALE: Record<ImageSize, number> = { "512": 0.5, "1K": 1, "2K": 2, "4K": 4 };

/**
 * Width and height of an image of the given size tier and ratio; null for an unknown ratio.
 * No ratio means 1:1 and no size means 1K, the upstream defaults.
 */
export function pixelSize(
  imageSize: ImageSize | null,
  aspectRatio: string | null,
): { width: number; height: number } | null {
  const base = SIZES_1K[aspectRatio ?? "1:1"];
  if (!base) return null;
  const scale = SCALE[imageSize ?? "1K"];
  return { width: Math.round(base[0] * scale), height: Math.round(base[1] * scale) };
}

export function isImageSize(value: unknown): value is ImageSize {
  return typeof value === "string" && value in SCALE;
}
