import type { IncomingMessage } from "node:http";
import type { FastifyInstance } from "fastify";

/** How much of a body an early answer waits for. */
export interface DrainBounds {
  /** Most bytes of the rest of the body read and discarded. */
  maxBytes: number;
  /** Longest wait for the rest of the body (ms). */
  maxMs: number;
}

/**
 * Holds an answer given before its request's body has all arrived (a 413 from the size check, a
 * 401 from the key check) until the rest of the body has been read and discarded. A client that
 * writes its whole body before it reads (Node's fetch, undici, most SDKs) would otherwise never
 * see the answer: a socket closed with unread bytes makes the kernel send a reset, and the
 * client's next write fails (EPIPE) before it has read a byte.
 *
 * The wait is bounded in bytes and in time, and the body's idle and pace limits go on applying
 * to it. A body beyond a bound is cut: the answer is written with `connection: close` and the
 * connection closed, as a client that reads while it sends can still see it.
 */
export function installEarlyAnswerDrain(app: FastifyInstance, bounds: DrainBounds): void {
  app.addHook("onSend", (request, reply, payload, done) => {
    const raw = request.raw;
    if (raw.complete || !hasBody(raw) || raw.socket.destroyed) return done(null, payload);
    drain(raw, bounds, (whole) => {
      if (!whole) reply.header("connection", "close");
      done(null, payload);
    });
  });
}

function hasBody(raw: IncomingMessage): boolean {
  return raw.headers["transfer-encoding"] !== undefined || Number(raw.headers["content-length"] ?? 0) > 0;
}

/** Reads and drops the rest of `raw`; `then(true)` once it has all arrived, `then(false)` if cut. */
function drain(raw: IncomingMessage, bounds: DrainBounds, then: (whole: boolean) => void): void {
  if (raw.readableEnded) {
    then(true);
    return;
  }
  let read = 0;
  const onData = (chunk: Buffer) => {
    read += chunk.length;
    if (read > bounds.maxBytes) finish(false);
  };
  const onEnd = () => finish(true);
  const onGone = () => finish(false);
  const timer = setTimeout(onGone, bounds.maxMs);
  function finish(whole: boolean) {
    clearTimeout(timer);
    raw.off("data", onData);
    raw.off("end", onEnd);
    raw.off("close", onGone);
    raw.off("error", onGone);
    // Cut: nothing more is read, so the connection closes as soon as the answer is written.
    if (!whole) raw.pause();
    then(whole);
  }
  raw.on("data", onData);
  raw.once("end", onEnd);
  raw.once("close", onGone);
  raw.once("error", onGone);
  raw.resume();
}
