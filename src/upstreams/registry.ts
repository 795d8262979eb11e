import { VendorRegistry } from "../core/vendor-registry.js";
import { anthropicVendor } from "./anthropic/vendor.js";
import { deepSeekVendor } from "./deepseek/vendor.js";
import { geminiVendor } from "./gemini/vendor.js";
import { generateRecordVendor } from "./generate-record/vendor.js";
import { openAiChatVendor } from "./openai-chat/vendor.js";
import { openAiImagesVendor } from "./openai-images/vendor.js";
import { openAiVideosVendor } from "./openai-videos/vendor.js";
import { taskRelayVendor } from "./task-relay/vendor.js";

/**
 * Every channel type the gateway speaks, one vendor adapter each: the only list of them. What
 * serves chat, content, images, tasks or videos, the admin API's types and their settings, the
 * config file's and the command line's checks, and each type's probe are all read from here.
 */
export const vendors = new VendorRegistry([
  taskRelayVendor,
  generateRecordVendor,
  geminiVendor,
  openAiImagesVendor,
  openAiChatVendor,
  anthropicVendor,
  openAiVideosVendor,
  deepSeekVendor,
]);
