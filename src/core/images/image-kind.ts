import { GatewayError } from "../errors.js";
import type { CallKind, Settlement } from "../metering/call-kind.js";
import type { MeteredCall } from "../metering/ports.js";
import { quotaForCall } from "../pricing.js";
import { isUpstreamError } from "../upstream-error.js";
import type { ImageModel } from "./catalog.js";
import { imageUpstreamFailure } from "./image-failure.js";
import type { ImageReference, InputImage } from "./image-input.js";
import type { UpstreamImageCall } from "./image-upstream.js";

/** One image generation call, validated (see validateImageRequest). */
export interface ImageCall extends MeteredCall {
  catalog: ImageModel;
  prompt: string;
  aspectRatio: string | null;
  n: number;
  /** The input images, inline or by URL, and the field each was given in. */
  references: Array<{ reference: ImageReference; field: string }>;
}

/** What goes upstream, but for the model name the channel knows. */
export type SentImageCall = Omit<UpstreamImageCall, "upstreamModel">;

/** Images delivered so far. */
export class ImageAccount<D> {
  images = 0;
  readonly complete = true;
  observe(): void {}
  observeAnswer(delivered: D[]): void {
    this.images = delivered.length;
  }
}

export type ImageKind<C, D> = CallKind<ImageCall, SentImageCall, number, number, ImageAccount<D>, C>;

const NO_IMAGE = "no image delivered";

/**
 * An image generation: priced per image at the first candidate's ratio (`quoted`: never more
 * than that hold, also after failover to a dearer channel), `n` images held, settled to the
 * images delivered; images given by URL are downloaded only once the hold is taken.
 */
export function imageKind<C, D>(fetchImage: (url: string, field: string) => Promise<InputImage>): ImageKind<C, D> {
  return {
    label: "images",
    pricing: "quoted",
    unknownModel: (model) =>
      new GatewayError("GW_ERR_VALIDATION", `body.model "${model}" is not offered by this gateway`, { param: "model" }),
    noPrice: (model) => new GatewayError("GW_ERR_NO_CHANNEL", `Model "${model}" has no price set and cannot be used.`),
    noChannel: (model) =>
      new GatewayError("GW_ERR_NO_CHANNEL", `No upstream channel is available for model "${model}".`),
    tooDear: () => new GatewayError("GW_ERR_VALIDATION", "body.n asks for more than can be charged", { param: "n" }),
    worstCase: (call) => call.n,
    quota: (images, price, ratios) => quotaForCall(price, ratios) * images,
    holdNote: (call) => `${call.model} x${call.n}`,
    upstreamRequest: ({ catalog, prompt, aspectRatio, n }) => ({ catalog, prompt, images: [], aspectRatio, n }),
    async prepare(sent, call) {
      if (call.references.length === 0) return sent;
      const images = await Promise.all(
        call.references.map(({ reference, field }) =>
          reference.kind === "inline" ? reference.image : fetchImage(reference.url, field),
        ),
      );
      return { ...sent, images };
    },
    unusableInput: NO_IMAGE,
    account: () => new ImageAccount<D>(),
    settlement: (account, _estimate, call): Settlement<number> =>
      account.images > 0
        ? { kind: "settle", usage: account.images, note: `delivered ${account.images} of ${call.n}` }
        : { kind: "refund", note: NO_IMAGE },
    // Images delivered; the token columns have no meaning for images.
    logged: (images) => ({ promptTokens: 0, outputTokens: images ?? 0, cachedTokens: 0, buckets: null }),
    clientError: (err) =>
      isUpstreamError(err)
        ? imageUpstreamFailure(err)
        : err instanceof GatewayError
          ? err
          : new GatewayError("GW_ERR_INTERNAL", "Internal error; the charge was refunded.", { cause: err }),
    logsAttempt: true,
  };
}
