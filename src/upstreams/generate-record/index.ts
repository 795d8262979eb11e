import type { Channel } from "../../core/channel.js";
import { type OutgoingTask, type PolledTask, pollOneByOne, type TaskUpstream } from "../../core/tasks/ports.js";
import type { UpstreamTaskState } from "../../core/tasks/upstream-state.js";
import { UpstreamError } from "../../core/upstream-error.js";
import { fetchRecordData, submitRecordTask } from "./api.js";
import { RECORD_ROUTES, type RecordRoute } from "./routes.js";
import { sendUpload, uploadState } from "./upload.js";

export { classifyRecordCode, fetchRecordData, submitRecordTask } from "./api.js";

/** The protocol allows at most 3 polls a second per task. */
export const RECORD_MIN_POLL_INTERVAL_MS = 350;

function routeOf(action: string): RecordRoute {
  const route = RECORD_ROUTES[action];
  if (!route) throw new UpstreamError("refused", `generate-record has no route for ${action}`);
  return route;
}

/** Polls one task at its route's record-info; null when the upstream does not know it. */
async function pollOne(channel: Channel, task: PolledTask, signal?: AbortSignal): Promise<UpstreamTaskState | null> {
  const now = Date.now();
  if (task.kind.action === "UPLOAD") return uploadState(task, now);
  const route = routeOf(task.kind.action);
  const data = await fetchRecordData(channel, route.pollPath, task.upstreamId, signal);
  if (!data) return null;
  return route.read(data, { upstreamId: task.upstreamId, tuning: route.tuning(task.body), nowMs: now });
}

/**
 * The generate-record protocol as a task adapter: each action at its provider route, each
 * polled at its own record-info, one task per poll call. UPLOAD completes in the gateway
 * (upload.ts).
 */
export const generateRecordTasks: TaskUpstream = {
  kinds: [...Object.keys(RECORD_ROUTES), "UPLOAD"].map((action) => `audiob:${action}`),
  minPollIntervalMs: RECORD_MIN_POLL_INTERVAL_MS,
  defaultConcurrency: 16,
  batchSize: () => 1,
  async submit(channel, task: OutgoingTask, signal) {
    if (task.kind.action === "UPLOAD") return sendUpload();
    const route = routeOf(task.kind.action);
    return submitRecordTask(channel, route.submitPath(task), route.body(task), signal);
  },
  poll: pollOneByOne(pollOne),
};
