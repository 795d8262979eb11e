import { GatewayError } from "../errors.js";
import { type AttemptReport, withFailover } from "../failover.js";
import { quotaForCall } from "../pricing.js";
import { isUpstreamError, publicUpstreamReason, type UpstreamError } from "../upstream-error.js";
import { allowsAspectRatio, findImageModel, IMAGE_MODELS, type ImageModel, MAX_INPUT_IMAGES } from "./catalog.js";
import { type InputImage, parseImageReference } from "./image-input.js";
import type { ImageMime } from "./image-type.js";
import { isImageNotReturned } from "./no-image-error.js";
import { normalizeImagePrompt } from "./prompt.js";

/** What the use case needs to know of a channel. */
export interface ImageChannel {
  id: number;
  priority: number;
  weight: number;
  priceRatio: number;
  modelMapping: Record<string, string>;
}

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

export interface GenerateImagesRequest {
  userId: number;
  tokenId: number;
  group: string;
  model: string;
  prompt: string;
  /** The `image` field as sent: absent, one string or an array of strings. */
  image: string | string[] | undefined;
  aspectRatio: string | undefined;
  n: number;
  responseFormat: "url" | "b64_json";
}

export interface GenerateImagesResult {
  created: number;
  data: Array<{ url: string; revised_prompt: string } | { b64_json: string; revised_prompt: string }>;
}

/** One line of the request log, as the use case knows it. */
export interface ImageCallRecord {
  model: string;
  channelId: number | null;
  /** Quota finally kept (0 when refunded or never charged). */
  quota: number;
  images: number;
  status: number;
  error: string | null;
}

/** The ports of the use case; `api/images` wires them to the store, the adapters and the blob store. */
export interface GenerateImagesDeps<C extends ImageChannel> {
  quotaPerUnit: number;
  maxImageBytes: number;
  /** Most channels tried for one request. */
  maxAttempts: number;
  candidates(model: string, group: string): Promise<C[]>;
  isKnownModel(model: string): Promise<boolean>;
  imagePrice(model: string): Promise<number | null>;
  groupRatio(group: string): Promise<number>;
  orderChannels(channels: C[]): C[];
  charge(input: { userId: number; tokenId: number; amount: number; reference: string; note: string }): Promise<void>;
  refund(reference: string, note: string): Promise<unknown>;
  settle(reference: string, amount: number, note: string): Promise<unknown>;
  /** Records what a delivered call cost on its open charge, due at once: the reaper settles it. */
  noteDelivered(reference: string, amount: number): Promise<void>;
  /** Logs a fault the client does not see. */
  warn(obj: object, msg: string): void;
  /** Fetches an input image URL through the SSRF guard; throws a 400 naming `field` on failure. */
  fetchImage(url: string, field: string): Promise<InputImage>;
  generate(channel: C, call: UpstreamImageCall): Promise<GeneratedImage[]>;
  /** Stores an image and answers its absolute public URL. */
  storeImage(image: GeneratedImage): Promise<string>;
  reportOutcome(report: AttemptReport<C>): void;
  /**
   * Adds the images this call stored to the user's image list, resolving once the list holds
   * them, so that a client that asks for its images after the answer finds them. Never rejects:
   * the images are delivered, and a failure is the operator's to see.
   */
  listDelivered(model: string): Promise<void>;
  record(entry: ImageCallRecord): void;
  newReference(): string;
  nowSeconds(): number;
}

function invalid(field: string, message: string): GatewayError {
  return new GatewayError("GW_ERR_VALIDATION", `body.${field} ${message}`, { param: field });
}

/** Validates everything that needs no network: model, prompt, ratio and the shape of `image`. */
export function validateImageRequest(req: GenerateImagesRequest, maxImageBytes: number) {
  const catalog = findImageModel(req.model);
  if (!catalog) {
    throw invalid(
      "model",
      `"${req.model}" is not an image model; use one of ${IMAGE_MODELS.map((m) => m.name).join(", ")}`,
    );
  }
  const prompt = normalizeImagePrompt(req.prompt);
  if (prompt === "") throw invalid("prompt", "must not be empty");
  let aspectRatio: string | null = null;
  if (req.aspectRatio !== undefined) {
    if (!allowsAspectRatio(catalog, req.aspectRatio)) {
      const extraHint = findImageModel("image-model-2-1k")?.aspectRatios.includes(req.aspectRatio)
        ? ` ("${req.aspectRatio}" is only available on the image-model-2- models)`
        : "";
      throw invalid(
        "aspect_ratio",
        `"${req.aspectRatio}" is not supported by ${catalog.name}${extraHint}; use one of ${catalog.aspectRatios.join(", ")}`,
      );
    }
    aspectRatio = req.aspectRatio;
  }
  const list = req.image === undefined ? [] : Array.isArray(req.image) ? req.image : [req.image];
  if (list.length > MAX_INPUT_IMAGES) {
    throw invalid("image", `holds ${list.length} images; at most ${MAX_INPUT_IMAGES} are accepted`);
  }
  const references = list.map((value, i) =>
    parseImageReference(Array.isArray(req.image) ? `image[${i}]` : "image", value, maxImageBytes),
  );
  return { catalog, prompt, aspectRatio, references };
}

/** The client-facing error for an upstream failure (the charge is refunded by the caller). */
export function imageUpstreamFailure(err: UpstreamError): GatewayError {
  const refunded = "; the charge was refunded";
  if (isImageNotReturned(err)) {
    return err.blocked
      ? new GatewayError(
          "GW_ERR_BAD_REQUEST",
          `The image was not generated: the upstream blocked the request for safety reasons (${err.reason})${refunded}.`,
          { param: "prompt" },
        )
      : new GatewayError("GW_ERR_UPSTREAM", `The upstream answered without an image (${err.reason})${refunded}.`);
  }
  if (err.kind === "refused" && (err.status === 400 || err.status === 413 || err.status === 422)) {
    return new GatewayError(
      "GW_ERR_BAD_REQUEST",
      `The upstream refused the request: ${publicUpstreamReason(err.message).replace(/\.$/, "")}${refunded}.`,
    );
  }
  if (err.kind === "auth") {
    return new GatewayError("GW_ERR_UPSTREAM", `No upstream channel accepted the request${refunded}.`);
  }
  return new GatewayError(
    "GW_ERR_UPSTREAM",
    `The upstream failed: ${publicUpstreamReason(err.message).replace(/\.$/, "")}${refunded}.`,
  );
}

/**
 * Generates images: validate, pick channels, charge `price x n` up front, fetch input images,
 * call the upstream with failover, store the images, then settle to what was delivered (or
 * refund everything when nothing came back). Every charge ends refunded or settled exactly once.
 */
export async function generateImages<C extends ImageChannel>(
  deps: GenerateImagesDeps<C>,
  req: GenerateImagesRequest,
): Promise<GenerateImagesResult> {
  const { catalog, prompt, aspectRatio, references } = validateImageRequest(req, deps.maxImageBytes);

  const candidates = await deps.candidates(catalog.name, req.group);
  if (candidates.length === 0) {
    if (!(await deps.isKnownModel(catalog.name))) {
      throw invalid("model", `"${catalog.name}" is not offered by this gateway`);
    }
    throw new GatewayError("GW_ERR_NO_CHANNEL", `No upstream channel is available for model "${catalog.name}".`);
  }
  const price = await deps.imagePrice(catalog.name);
  if (price === null) {
    throw new GatewayError("GW_ERR_NO_CHANNEL", `Model "${catalog.name}" has no price set and cannot be used.`);
  }

  const ordered = deps.orderChannels(candidates);
  const groupRatio = await deps.groupRatio(req.group);
  const perImage = (channel: C) =>
    quotaForCall(price, { groupRatio, channelRatio: channel.priceRatio, quotaPerUnit: deps.quotaPerUnit });
  const charged = perImage(ordered[0] as C) * req.n;
  const reference = deps.newReference();
  await deps.charge({
    userId: req.userId,
    tokenId: req.tokenId,
    amount: charged,
    reference,
    note: `${catalog.name} x${req.n}`,
  });

  let channelId: number | null = null;
  try {
    // Input image URLs are fetched only once the hold is taken: a request its balance does not
    // cover downloads nothing. A URL that cannot be used refunds the hold (below).
    const images = await Promise.all(
      references.map((ref, i) =>
        ref.kind === "inline"
          ? ref.image
          : deps.fetchImage(ref.url, Array.isArray(req.image) ? `image[${i}]` : "image"),
      ),
    );
    const { result, channel } = await withFailover(
      ordered,
      { maxAttempts: deps.maxAttempts },
      (c) => {
        channelId = c.id;
        return deps.generate(c, {
          upstreamModel: c.modelMapping[catalog.name] ?? catalog.name,
          catalog,
          prompt,
          images,
          aspectRatio,
          n: req.n,
        });
      },
      (report) => deps.reportOutcome(report),
    );
    const delivered = result.slice(0, req.n);
    const data: GenerateImagesResult["data"] = [];
    for (const image of delivered) {
      data.push(
        req.responseFormat === "b64_json"
          ? { b64_json: image.bytes.toString("base64"), revised_prompt: prompt }
          : { url: await deps.storeImage(image), revised_prompt: prompt },
      );
    }
    // Never more than what was charged up front, even after failover to a dearer channel. The sale
    // is settled explicitly, also at the full amount: an open charge always means unfinished.
    const owed = Math.min(charged, perImage(channel) * data.length);
    try {
      await deps.settle(reference, owed, `delivered ${data.length} of ${req.n}`);
    } catch (err) {
      // The images are delivered: the charge stays open with its cost on it, and the reaper lands it.
      await deps.noteDelivered(reference, owed).catch(() => undefined);
      deps.warn({ err, reference, owed }, "image charge could not be settled; the charge reaper settles it");
    }
    await deps.listDelivered(catalog.name);
    deps.record({ model: catalog.name, channelId, quota: owed, images: data.length, status: 200, error: null });
    return { created: deps.nowSeconds(), data };
  } catch (err) {
    await deps.refund(reference, "no image delivered");
    const gwError = isUpstreamError(err)
      ? imageUpstreamFailure(err)
      : err instanceof GatewayError
        ? err
        : new GatewayError("GW_ERR_INTERNAL", "Internal error; the charge was refunded.", { cause: err });
    deps.record({
      model: catalog.name,
      channelId,
      quota: 0,
      images: 0,
      status: gwError.status,
      error: (err as Error)?.message?.slice(0, 500) ?? "unknown error",
    });
    throw gwError;
  }
}
