import type { IncomingMessage } from "node:http";

/** The least pace of a body still arriving, in mod_reqtimeout's shape (`body=20,MinRate=500`). */
export interface BodyMinRate {
  /** Bytes a second; 0: no pace required. */
  bytesPerSecond: number;
  /** The first time of a body, during which no pace is required (ms). */
  graceMs: number;
}

/** Least time between two looks at a body's pace, so a body on the edge costs few timer turns. */
const LEAST_STEP_MS = 50;

/**
 * Cuts a connection whose body comes in slower than a least average pace. A body starts with the
 * grace as its credit of time, and every `bytesPerSecond` bytes it sends add one second: a drip
 * of a byte a second runs out soon after the grace, while an upload at any real pace earns time
 * far faster than it spends it and is bounded only by the whole-request limit. A pause is the
 * idle limit's matter; this one judges the average.
 *
 * The bytes are counted on the socket (its running count of bytes read), so nothing listens to
 * the body itself; every body is read as it arrives, so the socket's pace is the client's. One
 * timer per body still arriving, set for the moment its credit would run out and moved on by
 * whatever arrived meanwhile.
 */
export function armBodyMinRate(raw: IncomingMessage, rate: BodyMinRate): void {
  if (rate.bytesPerSecond <= 0) return;
  const socket = raw.socket;
  const startedAt = performance.now();
  const startBytes = socket.bytesRead;
  const check = () => {
    if (raw.complete || socket.destroyed) return stop();
    const earnedMs = ((socket.bytesRead - startBytes) * 1000) / rate.bytesPerSecond;
    const leftMs = startedAt + rate.graceMs + earnedMs - performance.now();
    if (leftMs <= 0) socket.destroy();
    else timer = setTimeout(check, Math.max(leftMs, LEAST_STEP_MS));
  };
  let timer = setTimeout(check, rate.graceMs);
  const stop = () => {
    clearTimeout(timer);
    raw.off("end", stop);
    socket.off("close", stop);
  };
  raw.once("end", stop);
  socket.once("close", stop);
}
