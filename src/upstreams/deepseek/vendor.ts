import { CALL_SETTINGS } from "../../core/channel-settings.js";
import type { VendorAdapter } from "../../core/vendor-adapter.js";
import { modelListProbe } from "../model-list-probe.js";
import { openAiChatProtocol } from "../openai-chat/index.js";
import { DEEPSEEK_DIALECT } from "./dialect.js";

/** DeepSeek's API: Chat Completions whose answers show the model's reasoning. */
export const deepSeekVendor: VendorAdapter = {
  type: "deepseek",
  description: "DeepSeek API (/v1/chat/completions) with a Bearer key: chat, reasoning passed on",
  chat: openAiChatProtocol(DEEPSEEK_DIALECT),
  settings: CALL_SETTINGS,
  probe: modelListProbe,
};
