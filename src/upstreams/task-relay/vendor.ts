import { CALL_SETTINGS } from "../../core/channel-settings.js";
import type { VendorAdapter } from "../../core/vendor-adapter.js";
import { taskRelayTasks } from "./index.js";

/** The task-relay protocol: every audioa action, polled up to 100 tasks a call. */
export const taskRelayVendor: VendorAdapter = {
  type: "task-relay",
  description: "Audio task relay (audioa): POST {prefix}/submit/{ACTION} and {prefix}/fetch with a Bearer key",
  tasks: taskRelayTasks,
  settings: [...CALL_SETTINGS, "batchSize", "prefix"],
  // An empty fetch: answered at once, and refused when the key is wrong.
  probe: (channel) => ({
    method: "POST",
    url: `${channel.baseUrl}/${channel.settings.prefix ?? channel.models[0] ?? "audioa"}/fetch`,
    headers: { authorization: `Bearer ${channel.key}` },
    json: { ids: [], action: "MUSIC" },
  }),
};
