import type { FastifyInstance } from "fastify";

/**
 * Cuts a connection whose request body pauses longer than `idleMs`. The socket's inactivity timer
 * runs only while the body is being received and is switched off once it has all arrived, so the
 * answer, however slowly it streams to a reading client, is never cut by it. The whole request
 * (headers and body) is bounded separately by the server's request timeout. A request answered
 * before its body has arrived keeps the idle limit while the rest of the body is awaited.
 */
export function installBodyIdleTimeout(app: FastifyInstance, idleMs: number): void {
  app.addHook("onRequest", (request, reply, done) => {
    const raw = request.raw;
    const hasBody = raw.headers["transfer-encoding"] !== undefined || Number(raw.headers["content-length"] ?? 0) > 0;
    if (hasBody && !raw.complete) {
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
      // Answered before its body arrived (a 401, a 413): the server would wait for the rest of the
      // body as long as the keep-alive limit allows; the idle limit applies to that wait too.
      reply.raw.once("finish", () => {
        if (!raw.complete) socket.setTimeout(idleMs);
      });
    }
    done();
  });
}
