import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * Cuts a connection whose request body pauses longer than `idleMs`. The socket's inactivity timer
 * runs only while the body is being received and is switched off once it has all arrived, so the
 * answer, however slowly it streams to a reading client, is never cut by it. The whole request
 * (headers and body) is bounded separately by the server's request timeout, and the body's
 * average pace by `armBodyMinRate`. A request answered before its body has arrived keeps the
 * idle limit while the rest of the body is awaited (`installEarlyAnswerDrain`).
 */
export function armIdleTimer(raw: IncomingMessage, res: ServerResponse, idleMs: number): void {
  const socket = raw.socket;
  // Only a body still arriving is cut: once the request is complete the answer may take its time
  // (a slow stream), whether or not the body's "end" was seen yet.
  const cut = () => {
    if (raw.complete) socket.setTimeout(0);
    else socket.destroy();
  };
  socket.setTimeout(idleMs, cut);
  raw.once("end", () => {
    socket.setTimeout(0);
    socket.off("timeout", cut);
  });
  // An answer finished before its body arrived (one whose body was cut past the early-answer
  // bounds, or one written around the hooks) leaves the connection until it closes: the idle
  // limit applies to that wait too. An answer already finished before the timer was armed has
  // left the timer as armed here.
  if (!res.writableFinished) {
    res.once("finish", () => {
      if (!raw.complete) socket.setTimeout(idleMs);
    });
  }
}
