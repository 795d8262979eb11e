import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { TurnWrites } from "./turn-writes.js";

/** A server whose answers write events over two turns, the last turn ending the answer. */
async function serve(
  answer: (res: http.ServerResponse, turn: TurnWrites) => void,
): Promise<{ text: string; socketWrites: number }> {
  let socketWrites = 0;
  const server = http.createServer((_req, res) => {
    const socket = res.socket as unknown as Record<string, (...args: unknown[]) => unknown>;
    for (const name of ["_write", "_writev"]) {
      const own = socket[name] as (...args: unknown[]) => unknown;
      socket[name] = function (this: unknown, ...args: unknown[]) {
        socketWrites++;
        return own.apply(this, args);
      };
    }
    answer(res, new TurnWrites(res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { connection: "close" } });
    return { text: await res.text(), socketWrites };
  } finally {
    server.close();
  }
}

describe("a streamed answer's writes of one turn", () => {
  it("leave in one socket write per turn, the last events together with the end of the answer", async () => {
    const { text, socketWrites } = await serve((res, turn) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      turn.gather();
      res.write("data: 1\r\n\r\n");
      setTimeout(() => {
        turn.gather();
        res.write("data: 2\r\n\r\n");
        res.write("data: 3\r\n\r\n");
        turn.end();
      }, 5);
    });
    expect(text).toBe("data: 1\r\n\r\ndata: 2\r\n\r\ndata: 3\r\n\r\n");
    // The head with the first event, then the last two events with the end.
    expect(socketWrites).toBe(2);
  });

  it("end with a last piece of text written in the same turn", async () => {
    const { text } = await serve((res, turn) => {
      res.writeHead(200, { "content-type": "application/json" });
      turn.gather();
      res.write('[{"a":1}');
      turn.end("]");
    });
    expect(JSON.parse(text)).toEqual([{ a: 1 }]);
  });
});
