import type { ImageModel } from "./catalog.js";
import type { InputImage } from "./image-input.js";
import type { ImageMime } from "./image-type.js";

/** One upstream generation call, as every adapter receives it. */
export interface UpstreamImageCall {
  /** The model name the channel knows (after its model mapping). */
  upstreamModel: string;
  catalog: ImageModel;
  prompt: string;
  images: InputImage[];
  aspectRatio: string | null;
  n: number;
}

export interface GeneratedImage {
  mimeType: ImageMime;
  bytes: Buffer;
}

/** Downloads an image URL an upstream answered with; `trusted` when it is on the channel's own host. */
export type ResultDownloader = (url: string, options: { trusted: boolean }) => Promise<GeneratedImage>;

/** One upstream protocol of image generation, as an adapter implements it; failures are UpstreamErrors. */
export interface ImageUpstream<C> {
  /**
   * Generates `call.n` images (fewer when the upstream returned fewer); an answer with no usable
   * image is an ImageNotReturnedError. Images answered by URL are fetched with `download`.
   */
  generate(channel: C, call: UpstreamImageCall, download: ResultDownloader): Promise<GeneratedImage[]>;
}
