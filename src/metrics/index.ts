export { installRequestMetrics } from "./http.js";
export { quotaObserver } from "./quota.js";
export {
  createGatewayMetrics,
  type GatewayMetrics,
  type MetricsOptions,
  TASK_STATES,
  type TaskStateCount,
  type UpstreamOutcome,
} from "./registry.js";
export { countUpstreamCall, upstreamOutcome } from "./upstream.js";
