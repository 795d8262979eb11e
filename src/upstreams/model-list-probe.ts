import type { Channel } from "../core/channel.js";
import type { ProbeCall } from "../core/vendor-adapter.js";

/** The probe of an OpenAI-style API: its model list (`GET {base}/v1/models`) with the Bearer key. */
export function modelListProbe(channel: Channel): ProbeCall {
  return { method: "GET", url: `${channel.baseUrl}/v1/models`, headers: { authorization: `Bearer ${channel.key}` } };
}
