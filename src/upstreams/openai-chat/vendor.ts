import { CALL_SETTINGS } from "../../core/channel-settings.js";
import type { VendorAdapter } from "../../core/vendor-adapter.js";
import { modelListProbe } from "../model-list-probe.js";
import { openAiEmbeddingsUpstream } from "./embeddings.js";
import { openAiChatUpstream } from "./index.js";

/** Any OpenAI-compatible chat completions endpoint. */
export const openAiChatVendor: VendorAdapter = {
  type: "openai-chat",
  description:
    "OpenAI-compatible chat completions (/v1/chat/completions) and embeddings (/v1/embeddings) with a Bearer key",
  chat: openAiChatUpstream,
  embeddings: openAiEmbeddingsUpstream,
  settings: CALL_SETTINGS,
  probe: modelListProbe,
};
