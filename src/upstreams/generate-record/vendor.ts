import { CALL_SETTINGS } from "../../core/channel-settings.js";
import type { VendorAdapter } from "../../core/vendor-adapter.js";
import { generateRecordTasks } from "./index.js";

/** The generate-record protocol: the audiob actions, each at its route, polled one task a call. */
export const generateRecordVendor: VendorAdapter = {
  type: "generate-record",
  description: "Audio generate-and-record API (audiob): each action at its route, polled at its record-info",
  tasks: generateRecordTasks,
  settings: CALL_SETTINGS,
  // A record lookup of an id no task has: answered at once, and refused when the key is wrong.
  probe: (channel) => ({
    method: "GET",
    url: `${channel.baseUrl}/api/v1/generate/record-info?taskId=probe`,
    headers: { authorization: `Bearer ${channel.key}` },
  }),
};
