import { type Dispatcher, FormData, request } from "undici";
import type { Channel } from "../../core/channel.js";
import type { TaskAttachment } from "../../core/tasks/ports.js";
import { UpstreamError } from "../../core/upstream-error.js";
import { callUpstream, networkError, readJson, safeUrl } from "../http.js";

const DEFAULT_TIMEOUT_MS = 60_000;

/** A video object as the upstream answers it (only the fields the gateway reads). */
export interface UpstreamVideo {
  id: string;
  status: string;
  progress?: number | null;
  error?: { code?: string; message?: string } | null;
}

function videosUrl(channel: Channel, path = ""): string {
  return `${channel.baseUrl.replace(/\/+$/, "")}/v1/videos${path}`;
}

function limits(channel: Channel) {
  return {
    connectTimeoutMs: channel.settings.connectTimeoutMs,
    firstByteTimeoutMs: channel.settings.firstByteTimeoutMs,
    timeoutMs: channel.settings.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  };
}

function asVideo(answer: unknown, url: string): UpstreamVideo {
  const v = answer as Record<string, unknown> | null;
  if (!v || typeof v.id !== "string" || v.id === "" || typeof v.status !== "string") {
    throw new UpstreamError("retryable", `upstream answered something other than a video (${safeUrl(url)})`, {
      status: 200,
    });
  }
  return v as unknown as UpstreamVideo;
}

async function sendJson(channel: Channel, method: "GET" | "POST", url: string, json?: unknown, signal?: AbortSignal) {
  const res = await callUpstream({
    method,
    url,
    headers: { authorization: `Bearer ${channel.key}`, accept: "application/json" },
    json,
    signal,
    ...limits(channel),
  });
  return asVideo(await readJson(res, url, { secret: channel.key }), url);
}

/** `POST /v1/videos` as a multipart form: the fields and the reference image as a file. */
async function sendForm(
  channel: Channel,
  url: string,
  fields: Record<string, string>,
  file: TaskAttachment,
  signal: AbortSignal,
): Promise<UpstreamVideo> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append(file.field, new Blob([new Uint8Array(file.bytes)], { type: file.mimeType }), file.fileName);
  const { timeoutMs, firstByteTimeoutMs } = limits(channel);
  let res: Dispatcher.ResponseData;
  try {
    res = await request(url, {
      method: "POST",
      headers: { authorization: `Bearer ${channel.key}`, accept: "application/json" },
      body: form,
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
      headersTimeout: firstByteTimeoutMs ?? 60_000,
    });
  } catch (err) {
    throw networkError(err, url);
  }
  return asVideo(await readJson(res, url, { secret: channel.key }), url);
}

/** Creates a video upstream (JSON, or a form when a reference image goes with it). */
export function createUpstreamVideo(
  channel: Channel,
  fields: Record<string, string>,
  file: TaskAttachment | null,
  signal: AbortSignal,
): Promise<UpstreamVideo> {
  const url = videosUrl(channel);
  return file ? sendForm(channel, url, fields, file, signal) : sendJson(channel, "POST", url, fields, signal);
}

/** Remixes one of the channel's videos. */
export function remixUpstreamVideo(channel: Channel, upstreamId: string, prompt: string, signal: AbortSignal) {
  return sendJson(channel, "POST", videosUrl(channel, `/${encodeURIComponent(upstreamId)}/remix`), { prompt }, signal);
}

/** One video's state; null when the upstream does not know it (404). */
export async function retrieveUpstreamVideo(
  channel: Channel,
  upstreamId: string,
  signal?: AbortSignal,
): Promise<UpstreamVideo | null> {
  try {
    return await sendJson(channel, "GET", videosUrl(channel, `/${encodeURIComponent(upstreamId)}`), undefined, signal);
  } catch (err) {
    if (err instanceof UpstreamError && err.status === 404) return null;
    throw err;
  }
}

/** The content URLs of a video at the channel (behind the channel's key). */
export function upstreamContentUrls(channel: Channel, upstreamId: string) {
  const base = videosUrl(channel, `/${encodeURIComponent(upstreamId)}/content`);
  return { video: base, thumbnail: `${base}?variant=thumbnail`, spritesheet: `${base}?variant=spritesheet` };
}
