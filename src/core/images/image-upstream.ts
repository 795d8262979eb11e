import type { GeneratedImage, UpstreamImageCall } from "./generate-images.js";

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
