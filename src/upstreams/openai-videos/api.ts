import { randomBytes } from "node:crypto";
import { type Dispatcher, request } from "undici";
import type { Channel } from "../../core/channel.js";
import { deadline } from "../../core/deadline-signal.js";
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

/** A header value of a form part: no quote or line break can end it early. */
const partValue = (text: string) => text.replace(/["\r\n]/g, "_");

/**
 * The multipart/form-data body of the fields and one file, built whole: the reference image is
 * small and already in memory, and a body of known length needs no streaming encoder.
 */
export function multipartBody(fields: Record<string, string>, file: TaskAttachment): { type: string; body: Buffer } {
  const boundary = `----media-gateway-${randomBytes(12).toString("hex")}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(
      Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${partValue(name)}"\r\n\r\n${value}\r\n`),
    );
  }
  parts.push(
    Buffer.from(
      `--${boundary}\r\ncontent-disposition: form-data; name="${partValue(file.field)}"; filename="${partValue(file.fileName)}"\r\n` +
        `content-type: ${partValue(file.mimeType)}\r\n\r\n`,
    ),
    file.bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { type: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(parts) };
}

/** `POST /v1/videos` as a multipart form: the fields and the reference image as a file. */
async function sendForm(
  channel: Channel,
  url: string,
  fields: Record<string, string>,
  file: TaskAttachment,
  signal: AbortSignal,
): Promise<UpstreamVideo> {
  const form = multipartBody(fields, file);
  const { timeoutMs, firstByteTimeoutMs } = limits(channel);
  // One controller for the call: the whole-call limit, following the caller's signal; its timer
  // ends with the answer.
  const limit = deadline(timeoutMs, signal);
  try {
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method: "POST",
        headers: { authorization: `Bearer ${channel.key}`, accept: "application/json", "content-type": form.type },
        body: form.body,
        signal: limit.signal,
        headersTimeout: firstByteTimeoutMs ?? 60_000,
      });
    } catch (err) {
      throw networkError(err, url);
    }
    return asVideo(await readJson(res, url, { secret: channel.key }), url);
  } finally {
    limit.clear();
  }
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
