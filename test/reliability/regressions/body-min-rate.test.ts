import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../../src/config/defaults.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";

/**
 * Before: a body dripped at a byte a second was cut only at the whole-request limit (120 s), and
 * that same limit cut a real upload of a large body at 100 KB/s. Now a body must keep a least
 * average pace once its grace is over (mod_reqtimeout's shape); the grace and the pace are set
 * small here so that the test never waits long, and the request and idle limits far above them,
 * so that only the pace can end a body within the test's time.
 */
const MIN_RATE = 500;
const GRACE_MS = 300;

describe("a body's least pace [sqlite]", () => {
  let gw: TestGateway;
  let key: string;
  let port: number;
  beforeAll(async () => {
    gw = await startTestGateway("sqlite", {
      logLevel: "warn",
      http: {
        requestTimeoutMs: 60_000,
        bodyIdleTimeoutMs: 10_000,
        keepAliveTimeoutMs: 60_000,
        bodyMinBytesPerSecond: MIN_RATE,
        bodyRateGraceMs: GRACE_MS,
      },
    });
    key = (await gw.createUser({ quota: 1_000_000 })).key;
    port = Number(new URL(gw.url).port);
  });
  afterAll(async () => {
    await gw?.close();
  });

  /**
   * Sends a valid body of `size` bytes (a fetch of one task id, padded with spaces) in pieces of
   * `piece` bytes every `everyMs`, reading as it goes. Resolves with what the gateway wrote and
   * how many body bytes were sent, once the gateway has answered or closed the connection; gives
   * up after `giveUpMs` (far above the grace).
   */
  function paced(size: number, piece: number, everyMs: number, giveUpMs = 8000) {
    const json = '{"ids":["task_x"]}';
    const body = Buffer.from(json + " ".repeat(size - json.length));
    return new Promise<{ answer: string; sent: number; open: boolean }>((resolve) => {
      const socket = net.connect(port, "127.0.0.1");
      let answer = "";
      let sent = 0;
      let timer: NodeJS.Timeout | undefined;
      const end = (open: boolean) => {
        clearInterval(timer);
        clearTimeout(giveUp);
        socket.destroy();
        resolve({ answer, sent, open });
      };
      const giveUp = setTimeout(() => end(true), giveUpMs);
      socket.on("error", () => {});
      socket.on("data", (d: Buffer) => {
        answer += d.toString("utf8");
        if (answer.trimEnd().endsWith("}")) end(false);
      });
      socket.on("close", () => end(false));
      socket.on("connect", () => {
        socket.write(
          `POST /audioa/fetch HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`,
        );
        const step = () => {
          if (socket.destroyed || sent >= size) return;
          socket.write(body.subarray(sent, sent + piece));
          sent = Math.min(size, sent + piece);
        };
        step();
        timer = setInterval(step, everyMs);
      });
    });
  }

  it("a body dripped at a byte a second is cut soon after the grace", async () => {
    const { answer, sent, open } = await paced(1000, 1, 1000);
    expect(open).toBe(false);
    expect(answer).not.toContain("200 OK");
    // Cut long before the request limit, within a few drips of the grace's end.
    expect(sent).toBeLessThan(5);
  });

  it("a body at half the least pace is cut once its earned time runs out", async () => {
    // 25 bytes every 100 ms: 250 bytes a second.
    const { answer, sent, open } = await paced(10_000, 25, 100);
    expect(open).toBe(false);
    expect(answer).not.toContain("200 OK");
    expect(sent).toBeLessThan(10_000);
  });

  it("an upload at 50 KB/s, lasting many graces, arrives whole and is answered", async () => {
    const { answer, sent } = await paced(100 * 1024, 5 * 1024, 100);
    expect(sent).toBe(100 * 1024);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });

  it("an upload at four times the least pace is never cut by it", async () => {
    // 200 bytes every 100 ms: 2 KB a second, for 2 s.
    const { answer, sent } = await paced(4000, 200, 100);
    expect(sent).toBe(4000);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });

  it("by default the whole-request limit lets the largest body arrive at 100 KB/s", () => {
    const config = defaultConfig({});
    const largest = Math.max(config.bodyLimitBytes, ...Object.values(config.bodies).map((b) => b.maxBytes));
    expect(config.http.requestTimeoutMs).toBeGreaterThan((largest / (100 * 1000)) * 1000);
    // And the default pace cuts a byte-a-second drip within 30 s: at t ms it has earned
    // t / rate ms on top of the grace, so its time runs out at grace / (1 - 1 / rate).
    const cutAfterMs = config.http.bodyRateGraceMs / (1 - 1 / config.http.bodyMinBytesPerSecond);
    expect(cutAfterMs).toBeLessThan(30_000);
  });
});
