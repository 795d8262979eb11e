import { answerAsEvents } from "../core/chat/answer-events.js";
import type { ChatAnswer, ChatEvent } from "../core/chat/canonical.js";
import { callUpstreamStreaming } from "./direct-call.js";
import { type ChunkedAnswer, postJson, readJson, type UpstreamEndpoint } from "./http.js";

/** Where a chat vendor's call goes and the headers that carry the channel's key. */
export interface ChatPost {
  url: string;
  headers: Record<string, string>;
}

/** A call of `{base}/v1/{path}` (a base that already ends in `/v1` is taken as it is) with these headers. */
export function v1Post(baseUrl: string, path: string, headers: Record<string, string>): ChatPost {
  const base = baseUrl.replace(/\/+$/, "");
  return { url: base.endsWith("/v1") ? `${base}/${path}` : `${base}/v1/${path}`, headers };
}

/** Sends `body` as a JSON POST; its answer is read as it arrives, with no readable stream made of it. */
function send(channel: UpstreamEndpoint, post: ChatPost, body: unknown, signal: AbortSignal) {
  return callUpstreamStreaming(postJson(channel, post.url, post.headers, { json: body }, signal));
}

/** A chat call answered whole: its JSON body; an error status is thrown as `readJson` classifies it. */
export async function postChat(
  channel: UpstreamEndpoint,
  post: ChatPost,
  body: unknown,
  signal: AbortSignal,
): Promise<unknown> {
  const res = await send(channel, post, body, signal);
  return readJson(res, post.url, { secret: channel.key });
}

/**
 * A streamed chat call: an error status is thrown as `readJson` classifies it; a server that
 * ignored `stream: true` and answered at once has its answer read whole (`whole`) and given as
 * events; otherwise its stream is read by `events`.
 */
export async function postChatStream(
  channel: UpstreamEndpoint,
  post: ChatPost,
  body: unknown,
  signal: AbortSignal,
  read: { whole(body: unknown): ChatAnswer; events(res: ChunkedAnswer): AsyncGenerator<ChatEvent> },
): Promise<AsyncGenerator<ChatEvent>> {
  const res = await send(channel, post, body, signal);
  if (res.statusCode < 200 || res.statusCode >= 300) await readJson(res, post.url, { secret: channel.key });
  if (String(res.headers["content-type"] ?? "").includes("application/json")) {
    return answerAsEvents(read.whole(await readJson(res, post.url, { secret: channel.key })));
  }
  return read.events(res);
}
