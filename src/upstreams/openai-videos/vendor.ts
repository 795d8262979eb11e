import { CALL_SETTINGS } from "../../core/channel-settings.js";
import type { VendorAdapter } from "../../core/vendor-adapter.js";
import { modelListProbe } from "../model-list-probe.js";
import { openAiVideoTasks } from "./index.js";

/** The OpenAI Videos API: video creates and remixes, polled one video a call at the channel's rate. */
export const openAiVideosVendor: VendorAdapter = {
  type: "openai-videos",
  description: "OpenAI Videos API (/v1/videos) with a Bearer key",
  tasks: openAiVideoTasks,
  settings: [...CALL_SETTINGS, "pollsPerSecond"],
  probe: modelListProbe,
};
