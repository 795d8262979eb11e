import { GatewayError } from "../errors.js";
import { meterOnce } from "../metering/once.js";
import type { MeteredChannel, MeteringDeps } from "../metering/ports.js";
import { allowsAspectRatio, findImageModel, IMAGE_MODELS, MAX_INPUT_IMAGES } from "./catalog.js";
import { type InputImage, parseImageReference } from "./image-input.js";
import { type ImageCall, imageKind } from "./image-kind.js";
import type { GeneratedImage, UpstreamImageCall } from "./image-upstream.js";
import { normalizeImagePrompt } from "./prompt.js";

/** An image call has no client signal: it runs to its end once started. */
const NEVER = new AbortController().signal;

/** What the use case needs to know of a channel. */
export type ImageChannel = MeteredChannel;

export interface GenerateImagesRequest {
  requestId: string;
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

/** The ports of the use case: a metered call's (priced per image), and the images' own. */
export interface GenerateImagesDeps<C extends ImageChannel> extends MeteringDeps<C, number> {
  maxImageBytes: number;
  /** Fetches an input image URL through the SSRF guard; throws a 400 naming `field` on failure. */
  fetchImage(url: string, field: string): Promise<InputImage>;
  /** One upstream call (the engine holds the channel's slot around it). */
  generate(channel: C, call: UpstreamImageCall): Promise<GeneratedImage[]>;
  /** Stores an image and answers its absolute public URL. */
  storeImage(image: GeneratedImage): Promise<string>;
  /**
   * Adds the images this call stored to the user's image list, resolving once the list holds
   * them, so that a client that asks for its images after the answer finds them. Never rejects:
   * the images are delivered, and a failure is the operator's to see.
   */
  listDelivered(model: string): Promise<void>;
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

/**
 * Generates images on the metered-call engine (see image-kind.ts): validate, hold `price x n`,
 * fetch input images, call the upstream with failover, store the images, then settle to what was
 * delivered (or refund everything when nothing came back). Every charge ends refunded or settled
 * exactly once.
 */
export async function generateImages<C extends ImageChannel>(
  deps: GenerateImagesDeps<C>,
  req: GenerateImagesRequest,
): Promise<GenerateImagesResult> {
  const { catalog, prompt, aspectRatio, references } = validateImageRequest(req, deps.maxImageBytes);
  const call: ImageCall = {
    requestId: req.requestId,
    reference: deps.newReference(),
    caller: { userId: req.userId, tokenId: req.tokenId, group: req.group },
    model: catalog.name,
    signal: NEVER,
    catalog,
    prompt,
    aspectRatio,
    n: req.n,
    references: references.map((reference, i) => ({
      reference,
      field: Array.isArray(req.image) ? `image[${i}]` : "image",
    })),
  };
  const kind = imageKind<C, GenerateImagesResult["data"][number]>((url, field) => deps.fetchImage(url, field));
  const { answer: data } = await meterOnce(
    deps,
    kind,
    call,
    (channel, upstreamModel, sent) => deps.generate(channel, { ...sent, upstreamModel }),
    async (generated) => {
      const data: GenerateImagesResult["data"] = [];
      for (const image of generated.slice(0, req.n)) {
        data.push(
          req.responseFormat === "b64_json"
            ? { b64_json: image.bytes.toString("base64"), revised_prompt: prompt }
            : { url: await deps.storeImage(image), revised_prompt: prompt },
        );
      }
      return data;
    },
  );
  await deps.listDelivered(catalog.name);
  return { created: deps.nowSeconds(), data };
}
