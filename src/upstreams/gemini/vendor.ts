import { CALL_SETTINGS } from "../../core/channel-settings.js";
import type { VendorAdapter } from "../../core/vendor-adapter.js";
import { geminiChatUpstream } from "./chat.js";
import { countContentTokens, generateContent, openContentStream } from "./content.js";
import { geminiEmbeddingsUpstream } from "./embeddings.js";
import { generateGeminiImages } from "./image.js";

/** Google's Gemini API: Gemini-native content, chat translated to it, and its image models. */
export const geminiVendor: VendorAdapter = {
  type: "gemini",
  description: "Google Gemini API (/v1beta/models) with an x-goog-api-key: content, chat, image and embedding models",
  content: { generate: generateContent, openStream: openContentStream, countTokens: countContentTokens },
  chat: geminiChatUpstream,
  // Gemini answers images inline: nothing to download.
  images: { generate: (channel, call) => generateGeminiImages(channel, call) },
  embeddings: geminiEmbeddingsUpstream,
  settings: CALL_SETTINGS,
  probe: (channel) => ({
    method: "GET",
    url: `${channel.baseUrl}/v1beta/models?pageSize=1`,
    headers: { "x-goog-api-key": channel.key },
  }),
};
