import type { ChatMessage, ChatPart, ChatRequest } from "./canonical.js";

/**
 * The request with every image given by URL downloaded and inlined, so that every upstream gets
 * the bytes (none of them is asked to reach a URL the gateway did not check). Downloads run in
 * parallel; the first failure is thrown.
 */
export async function inlineImages(
  request: ChatRequest,
  fetchImage: (url: string, field: string) => Promise<{ mimeType: string; data: string }>,
): Promise<ChatRequest> {
  const pending: Promise<void>[] = [];
  const inlineParts = (parts: ChatPart[]): ChatPart[] =>
    parts.map((part) => {
      if (part.type !== "image" || part.source.kind !== "url") return part;
      const copy: ChatPart = { ...part };
      const { url } = part.source;
      pending.push(
        fetchImage(url, part.field).then((image) => {
          copy.source = { kind: "inline", image };
        }),
      );
      return copy;
    });
  const messages = request.messages.map((m) => ({ ...m, parts: inlineParts(m.parts) }) as ChatMessage);
  if (pending.length === 0) return request;
  await Promise.all(pending);
  return { ...request, messages };
}
