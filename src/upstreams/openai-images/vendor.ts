import { CALL_SETTINGS } from "../../core/channel-settings.js";
import type { VendorAdapter } from "../../core/vendor-adapter.js";
import { modelListProbe } from "../model-list-probe.js";
import { generateOpenAiImages } from "./generate.js";

/** An OpenAI-compatible image generation endpoint. */
export const openAiImagesVendor: VendorAdapter = {
  type: "openai-images",
  description: "OpenAI-compatible image generation (/v1/images/generations) with a Bearer key",
  images: { generate: generateOpenAiImages },
  settings: CALL_SETTINGS,
  probe: modelListProbe,
};
