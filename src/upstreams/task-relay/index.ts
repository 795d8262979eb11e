import type { Channel } from "../../core/channel.js";
import { type KindResults, kindName, kindsOf } from "../../core/tasks/kinds.js";
import type { OutgoingTask, PolledTask, TaskUpstream } from "../../core/tasks/ports.js";
import type { UpstreamTaskState } from "../../core/tasks/upstream-state.js";
import { normalizeRelayTask } from "../../core/tasks/upstream-state.js";
import { UpstreamError } from "../../core/upstream-error.js";
import { callUpstream, readJson, safeUrl, upstreamMessage } from "../http.js";

/** Most ids one relay fetch may carry (the protocol's limit). */
export const RELAY_MAX_BATCH = 100;
const DEFAULT_TIMEOUT_MS = 30_000;

function prefixOf(channel: Channel, family: string): string {
  return channel.settings.prefix ?? family;
}

function authHeaders(channel: Channel): Record<string, string> {
  return { authorization: `Bearer ${channel.key}`, accept: "application/json" };
}

/** How many ids one poll call of this channel carries. */
export function relayBatchSize(channel: Channel): number {
  return Math.max(1, Math.min(RELAY_MAX_BATCH, channel.settings.batchSize ?? RELAY_MAX_BATCH));
}

/**
 * `POST {base}/{prefix}/submit/{ACTION}` with the client's validated body. Returns the upstream
 * task id; any answer other than `{"code":"success","data":"<id>"}` is a refusal.
 */
export async function submitRelayTask(
  channel: Channel,
  family: string,
  action: string,
  body: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<string> {
  const url = `${channel.baseUrl}/${prefixOf(channel, family)}/submit/${action}`;
  const res = await callUpstream({
    method: "POST",
    url,
    headers: authHeaders(channel),
    json: body,
    signal,
    connectTimeoutMs: channel.settings.connectTimeoutMs,
    firstByteTimeoutMs: channel.settings.firstByteTimeoutMs,
    timeoutMs: channel.settings.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  const answer = (await readJson(res, url, { secret: channel.key })) as Record<string, unknown> | null;
  if (!answer || typeof answer !== "object") {
    throw new UpstreamError("retryable", `upstream answered an empty submit (${safeUrl(url)})`, { status: 200 });
  }
  if (answer.code === "success" && typeof answer.data === "string" && answer.data !== "") return answer.data;
  const message = upstreamMessage(answer, channel.key) || `code ${String(answer.code)}`;
  throw new UpstreamError("refused", `upstream refused the task: ${message}`, { status: res.statusCode });
}

/**
 * `POST {base}/{prefix}/fetch` for up to 100 upstream ids. Ids the upstream does not know are
 * absent from the map.
 */
export async function fetchRelayTasks(
  channel: Channel,
  family: string,
  action: string,
  upstreamIds: string[],
  signal?: AbortSignal,
  results: KindResults = "audio",
): Promise<Map<string, UpstreamTaskState>> {
  const url = `${channel.baseUrl}/${prefixOf(channel, family)}/fetch`;
  const res = await callUpstream({
    method: "POST",
    url,
    headers: authHeaders(channel),
    json: { ids: upstreamIds, action },
    signal,
    connectTimeoutMs: channel.settings.connectTimeoutMs,
    firstByteTimeoutMs: channel.settings.firstByteTimeoutMs,
    timeoutMs: channel.settings.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  const answer = (await readJson(res, url, { secret: channel.key })) as Record<string, unknown> | null;
  if (answer?.code !== "success" || !Array.isArray(answer.data)) {
    const message = upstreamMessage(answer, channel.key) || "unexpected answer";
    throw new UpstreamError("retryable", `upstream fetch failed: ${message} (${safeUrl(url)})`, {
      status: res.statusCode,
    });
  }
  const out = new Map<string, UpstreamTaskState>();
  const now = Date.now();
  for (const item of answer.data) {
    const state = normalizeRelayTask(item, now, results);
    if (state) out.set(state.upstreamId, state);
  }
  return out;
}

/** The JSON sent to a `task-relay` upstream: the client's body as given, with the model mapped. */
export function relayRequestBody(task: OutgoingTask): Record<string, unknown> {
  const field = task.kind.upstreamModelField;
  return field ? { ...task.body, [field]: task.upstreamModel } : { ...task.body };
}

/**
 * The task-relay protocol as a task adapter: up to 100 tasks per poll call. It does every action
 * of family audioa, each forwarded as `submit/{ACTION}` with the client's body.
 */
export const taskRelayTasks: TaskUpstream = {
  kinds: kindsOf("audioa").map(kindName),
  minPollIntervalMs: 0,
  defaultConcurrency: 4,
  batchSize: relayBatchSize,
  submit: (channel, task, signal) =>
    submitRelayTask(channel, task.kind.family, task.kind.upstreamOperation, relayRequestBody(task), signal),
  poll(channel, tasks, signal) {
    const kind = (tasks[0] as PolledTask).kind;
    return fetchRelayTasks(
      channel,
      kind.family,
      kind.upstreamOperation,
      tasks.map((t) => t.upstreamId),
      signal,
      kind.results,
    );
  },
};
