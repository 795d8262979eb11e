import type { Channel } from "../../core/channel.js";
import { classifyStatus, UpstreamError, type UpstreamErrorClass } from "../../core/upstream-error.js";
import { callUpstream, readJson, safeUrl, upstreamMessage } from "../http.js";

const DEFAULT_TIMEOUT_MS = 30_000;

function authHeaders(channel: Channel): Record<string, string> {
  return { authorization: `Bearer ${channel.key}`, accept: "application/json" };
}

/** The class of a `code` in a generate-record body (it mirrors HTTP statuses). */
export function classifyRecordCode(code: number): UpstreamErrorClass {
  // 402: the upstream account has no credits left; the channel is unusable, not the request.
  if (code === 402) return "auth";
  return classifyStatus(code);
}

async function call(channel: Channel, method: "GET" | "POST", url: string, json?: unknown, signal?: AbortSignal) {
  const res = await callUpstream({
    method,
    url,
    headers: authHeaders(channel),
    json,
    signal,
    connectTimeoutMs: channel.settings.connectTimeoutMs,
    firstByteTimeoutMs: channel.settings.firstByteTimeoutMs,
    timeoutMs: channel.settings.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  const answer = (await readJson(res, url, { secret: channel.key })) as Record<string, any> | null;
  return { res, answer };
}

/**
 * `POST {base}{path}` with a camelCase body (`/api/v1/generate`, `/api/v1/lyrics`...). Returns
 * the upstream task id from `data.taskId`; any other answer is an error classified by its `code`.
 */
export async function submitRecordTask(
  channel: Channel,
  path: string,
  body: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<string> {
  const url = `${channel.baseUrl}${path}`;
  const { res, answer } = await call(channel, "POST", url, body, signal);
  if (!answer || typeof answer !== "object") {
    throw new UpstreamError("retryable", `upstream answered an empty submit (${safeUrl(url)})`, { status: 200 });
  }
  const taskId = answer.data?.taskId ?? answer.data?.task_id;
  if (Number(answer.code) === 200 && typeof taskId === "string" && taskId !== "") return taskId;
  const code = Number(answer.code);
  const kind = Number.isInteger(code) && code !== 200 ? classifyRecordCode(code) : "retryable";
  const message = upstreamMessage(answer, channel.key) || `code ${String(answer.code)}`;
  throw new UpstreamError(kind, `upstream refused the task (code ${String(answer.code)}): ${message}`, {
    status: Number.isInteger(code) ? code : res.statusCode,
  });
}

/**
 * `GET {base}{path}?taskId=...` (a route's `record-info`): the answer's `data`. Null when the
 * upstream does not know the task (yet).
 */
export async function fetchRecordData(
  channel: Channel,
  path: string,
  upstreamId: string,
  signal?: AbortSignal,
): Promise<Record<string, any> | null> {
  const url = `${channel.baseUrl}${path}?taskId=${encodeURIComponent(upstreamId)}`;
  const { res, answer } = await call(channel, "GET", url, undefined, signal);
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
      { status: Number.isInteger(code) ? code : res.statusCode },
    );
  }
  return answer.data && typeof answer.data === "object" ? answer.data : null;
}
