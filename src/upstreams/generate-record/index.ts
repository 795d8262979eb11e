import type { Channel } from "../../core/channel.js";
import type { AudiobTuning } from "../../core/tasks/clips.js";
import type { TaskUpstream } from "../../core/tasks/ports.js";
import { type AudiobMusicBody, audiobTuning } from "../../core/tasks/request-bodies.js";
import { normalizeRecordInfo, type UpstreamTaskState } from "../../core/tasks/upstream-state.js";
import { classifyStatus, UpstreamError, type UpstreamErrorClass } from "../../core/upstream-error.js";
import { callUpstream, readJson, safeUrl, upstreamMessage } from "../http.js";
import { recordRequestBody } from "./request.js";

const DEFAULT_TIMEOUT_MS = 30_000;
/** The protocol allows at most 3 polls a second per task. */
export const RECORD_MIN_POLL_INTERVAL_MS = 350;

function authHeaders(channel: Channel): Record<string, string> {
  return { authorization: `Bearer ${channel.key}`, accept: "application/json" };
}

/** The class of a `code` in a generate-record body (it mirrors HTTP statuses). */
export function classifyRecordCode(code: number): UpstreamErrorClass {
  // 402: the upstream account has no credits left; the channel is unusable, not the request.
  if (code === 402) return "auth";
  return classifyStatus(code);
}

/** `POST {base}/api/v1/generate` with the camelCase body. Returns the upstream task id. */
export async function submitRecordTask(
  channel: Channel,
  body: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<string> {
  const url = `${channel.baseUrl}/api/v1/generate`;
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
  const answer = (await readJson(res, url, { secret: channel.key })) as Record<string, any> | null;
  if (!answer || typeof answer !== "object") {
    throw new UpstreamError("retryable", `upstream answered an empty submit (${safeUrl(url)})`, { status: 200 });
  }
  const taskId = answer.data?.taskId;
  if (Number(answer.code) === 200 && typeof taskId === "string" && taskId !== "") return taskId;
  const code = Number(answer.code);
  const kind = Number.isInteger(code) && code !== 200 ? classifyRecordCode(code) : "retryable";
  const message = upstreamMessage(answer, channel.key) || `code ${String(answer.code)}`;
  throw new UpstreamError(kind, `upstream refused the task (code ${String(answer.code)}): ${message}`, {
    status: Number.isInteger(code) ? code : res.statusCode,
  });
}

/**
 * `GET {base}/api/v1/generate/record-info?taskId=...`. Null when the upstream does not know the
 * task (yet).
 */
export async function fetchRecordInfo(
  channel: Channel,
  upstreamId: string,
  tuning: AudiobTuning,
  signal?: AbortSignal,
): Promise<UpstreamTaskState | null> {
  const url = `${channel.baseUrl}/api/v1/generate/record-info?taskId=${encodeURIComponent(upstreamId)}`;
  const res = await callUpstream({
    method: "GET",
    url,
    headers: authHeaders(channel),
    signal,
    connectTimeoutMs: channel.settings.connectTimeoutMs,
    firstByteTimeoutMs: channel.settings.firstByteTimeoutMs,
    timeoutMs: channel.settings.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  const answer = (await readJson(res, url, { secret: channel.key })) as Record<string, any> | null;
  if (!answer || typeof answer !== "object") {
    throw new UpstreamError("retryable", `upstream answered an empty record (${safeUrl(url)})`, { status: 200 });
  }
  const code = Number(answer.code);
  if (code !== 200) {
    if (code === 404) return null;
    const message = upstreamMessage(answer, channel.key) || `code ${String(answer.code)}`;
    throw new UpstreamError(
      Number.isInteger(code) ? classifyRecordCode(code) : "retryable",
      `upstream record-info failed: ${message}`,
      {
        status: Number.isInteger(code) ? code : res.statusCode,
      },
    );
  }
  if (!answer.data || typeof answer.data !== "object") return null;
  return normalizeRecordInfo(answer.data, tuning, Date.now());
}

/** The generate-record protocol as a task adapter: one task per poll call. */
export const generateRecordTasks: TaskUpstream = {
  kinds: ["audiob:MUSIC"],
  minPollIntervalMs: RECORD_MIN_POLL_INTERVAL_MS,
  defaultConcurrency: 16,
  batchSize: () => 1,
  submit: (channel, task, signal) =>
    submitRecordTask(
      channel,
      recordRequestBody(task.body as AudiobMusicBody, task.upstreamModel, task.callbackUrl),
      signal,
    ),
  async poll(channel, tasks, signal) {
    const out = new Map<string, UpstreamTaskState>();
    for (const task of tasks) {
      const state = await fetchRecordInfo(channel, task.upstreamId, audiobTuning(task.body as AudiobMusicBody), signal);
      if (state) out.set(task.upstreamId, state);
    }
    return out;
  },
};
