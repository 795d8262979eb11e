/**
 * The image models the gateway sells. The public model name alone decides the family, the
 * resolution tier (and so the price) and which aspect ratios are allowed.
 */

/** `imageSize` values of the Gemini image API; null = the model's fixed size (nothing sent). */
export type ImageSize = "512" | "1K" | "2K" | "4K";

export type ImageFamily = "image-model" | "image-model-pro" | "image-model-2";

export interface ImageModel {
  /** Public model name, as clients send it and as prices are keyed. */
  name: string;
  family: ImageFamily;
  /** Resolution tier, for people: `0.5K`, `1K`, `2K`, `4K`. */
  tier: "0.5K" | "1K" | "2K" | "4K";
  /** What goes upstream as `imageConfig.imageSize`; null for the fixed-size model. */
  imageSize: ImageSize | null;
  aspectRatios: readonly string[];
}

/** Ratios every family accepts (the Gemini image API's list). */
export const STANDARD_ASPECT_RATIOS = [
  "1:1",
  "2:3",
  "3:2",
  "3:4",
  "4:3",
  "4:5",
  "5:4",
  "9:16",
  "16:9",
  "21:9",
] as const;

/** Extra, very wide or very tall ratios of the `image-model-2-` family only. */
export const EXTRA_ASPECT_RATIOS = ["1:4", "4:1", "1:8", "8:1"] as const;

/** Most input images one request may carry (image-to-image and blending). */
export const MAX_INPUT_IMAGES = 14;

/** Most images one request may ask for (`n`). */
export const MAX_IMAGES_PER_REQUEST = 4;

const STANDARD: readonly string[] = STANDARD_ASPECT_RATIOS;
const WITH_EXTRA: readonly string[] = [...STANDARD_ASPECT_RATIOS, ...EXTRA_ASPECT_RATIOS];

function model(name: string, family: ImageFamily, tier: ImageModel["tier"], imageSize: ImageSize | null): ImageModel {
  return { name, family, tier, imageSize, aspectRatios: family === "image-model-2" ? WITH_EXTRA : STANDARD };
}

export const IMAGE_MODELS: readonly ImageModel[] = [
  model("image-model", "image-model", "1K", null),
  model("image-model-pro-1k", "image-model-pro", "1K", "1K"),
  model("image-model-pro-2k", "image-model-pro", "2K", "2K"),
  model("image-model-pro-4k", "image-model-pro", "4K", "4K"),
  model("image-model-2-0.5k", "image-model-2", "0.5K", "512"),
  model("image-model-2-1k", "image-model-2", "1K", "1K"),
  model("image-model-2-2k", "image-model-2", "2K", "2K"),
  model("image-model-2-4k", "image-model-2", "4K", "4K"),
];

const BY_NAME = new Map(IMAGE_MODELS.map((m) => [m.name.toLowerCase(), m]));

/**
 * The catalog entry of a public model name, or null when it is not an image model. Names match
 * whatever their case (`image-model-pro-2K` is `image-model-pro-2k`); the entry's `name` is the
 * catalog's spelling, the one prices, channel model lists and logs use.
 */
export function findImageModel(name: string): ImageModel | null {
  return BY_NAME.get(name.toLowerCase()) ?? null;
}

/** Whether the model accepts the aspect ratio (exact `W:H` spelling from the family's list). */
export function allowsAspectRatio(m: ImageModel, ratio: string): boolean {
  return m.aspectRatios.includes(ratio);
}
