import { CALL_SETTINGS } from "../../core/channel-settings.js";
import type { VendorAdapter } from "../../core/vendor-adapter.js";
import { ANTHROPIC_VERSION, anthropicUpstream } from "./index.js";

/** Anthropic's Messages API. */
export const anthropicVendor: VendorAdapter = {
  type: "anthropic",
  description: "Anthropic Messages API (/v1/messages) with an x-api-key",
  chat: anthropicUpstream,
  settings: CALL_SETTINGS,
  probe: (channel) => ({
    method: "GET",
    url: `${channel.baseUrl}/v1/models`,
    headers: { "x-api-key": channel.key, "anthropic-version": ANTHROPIC_VERSION },
  }),
};
