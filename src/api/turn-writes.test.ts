import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { describe, expect, it, vi } from "vitest";
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
      void turn.write("data: 1\r\n\r\n");
      setTimeout(() => {
        void turn.write("data: 2\r\n\r\n");
        void turn.write("data: 3\r\n\r\n");
        turn.end();
      }, 5);
    });
    expect(text).toBe("data: 1\r\n\r\ndata: 2\r\n\r\ndata: 3\r\n\r\n");
    // The head with the first event, then the last two events with the end.
    expect(socketWrites).toBe(2);
  });

  it("wait for the end once held, and leave with it in one write, a write after the hold included", async () => {
    const { text, socketWrites } = await serve((res, turn) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      void turn.write("data: 1\r\n\r\n");
      void turn.write("data: 2\r\n\r\n");
      // Nothing more to relay: the answer ends once its call is settled, some turns later.
      turn.holdForEnd();
      setTimeout(() => {
        void turn.write("data: 3\r\n\r\n");
        setTimeout(() => turn.end(), 5);
      }, 10);
    });
    expect(text).toBe("data: 1\r\n\r\ndata: 2\r\n\r\ndata: 3\r\n\r\n");
    // The head, the three events and the end.
    expect(socketWrites).toBe(1);
  });

  it("end with a last piece of text written in the same turn", async () => {
    const { text } = await serve((res, turn) => {
      res.writeHead(200, { "content-type": "application/json" });
      void turn.write('[{"a":1}');
      turn.end("]");
    });
    expect(JSON.parse(text)).toEqual([{ a: 1 }]);
  });

  it("hold the writer back once a turn's write found the socket's buffer full, until it drains", async () => {
    const big = "x".repeat(4 * 1024 * 1024);
    let turn: TurnWrites | null = null;
    let response: http.ServerResponse | null = null;
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      response = res;
      turn = new TurnWrites(res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const client = net.connect(port, "127.0.0.1");
    let received = 0;
    try {
      client.write("GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
      await vi.waitFor(() => expect(turn).not.toBeNull());
      const writes = turn as unknown as TurnWrites;
      // The client reads nothing yet: the first turn's 4 MB fill the socket's buffer.
      client.pause();
      await writes.write(big);
      await new Promise((resolve) => setImmediate(resolve));
      let drained = false;
      const next = writes.write("data: after\n\n").then(() => {
        drained = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(drained).toBe(false);
      client.on("data", (chunk: Buffer) => {
        received += chunk.length;
      });
      client.resume();
      await next;
      expect(drained).toBe(true);
      writes.end();
      await new Promise((resolve) => client.once("close", resolve));
      expect(received).toBeGreaterThan(big.length);
      expect((response as unknown as http.ServerResponse).writableFinished).toBe(true);
    } finally {
      client.destroy();
      server.close();
    }
  });

  it("let the writer go on when the client left while it was held back", async () => {
    let turn: TurnWrites | null = null;
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      turn = new TurnWrites(res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const client = net.connect(port, "127.0.0.1");
    try {
      client.write("GET / HTTP/1.1\r\nhost: x\r\n\r\n");
      await vi.waitFor(() => expect(turn).not.toBeNull());
      const writes = turn as unknown as TurnWrites;
      client.pause();
      await writes.write("x".repeat(4 * 1024 * 1024));
      await new Promise((resolve) => setImmediate(resolve));
      const next = writes.write("more");
      client.destroy();
      await next;
      // Nothing more is gathered for an answer whose client is gone.
      await writes.write("still more");
    } finally {
      client.destroy();
      server.close();
    }
  });
});
