import { createHash } from "node:crypto";

/**
 * A clip id for a result the upstream names no id for (a stem, a WAV, a video): a UUID made from
 * the upstream task id and the result's name, so every poll of the task gives the same one.
 */
export function derivedClipId(upstreamId: string, name: string): string {
  const h = createHash("sha1").update(`${upstreamId}:${name}`).digest("hex").slice(0, 32).split("");
  h[12] = "5";
  h[16] = "89ab"[Number.parseInt(h[16] as string, 16) % 4] as string;
  const s = h.join("");
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}
