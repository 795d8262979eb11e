import { execFileSync } from "node:child_process";
import fs, { existsSync, mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { FastifyBaseLogger } from "fastify";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { gatheringDestination } from "../../src/logging/destination.js";
import { AccessLogController, loggerOptions, requestLoggerFactory } from "../../src/logging/logger.js";
import { redactUrl } from "../../src/logging/redaction.js";
import { callGateway } from "../reliability/harness.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";

interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  req?: { method: string; url: string; remoteAddress: string };
  res?: { statusCode: number };
  responseTime?: number;
}

const linesOf = (gw: TestGateway, requestId: string): LogLine[] =>
  gw.logs.map((l) => JSON.parse(l) as LogLine).filter((l) => l.reqId === requestId);

async function untilLogged(gw: TestGateway, requestId: string, msg: string): Promise<void> {
  const end = Date.now() + 2000;
  while (!linesOf(gw, requestId).some((l) => l.msg === msg)) {
    if (Date.now() > end) throw new Error(`no "${msg}" line for ${requestId}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("access log", () => {
  let gw: TestGateway;
  let debugGw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway("sqlite");
    debugGw = await startTestGateway("sqlite", { logLevel: "debug" });
  });
  afterAll(async () => {
    await gw?.close();
    await debugGw?.close();
  });

  it("writes one line per request at info, when it is answered, with method, URL without the key, status and time", async () => {
    const res = await fetch(`${gw.url}/v1beta/models/gemini-2.5-flash:generateContent?key=sk-not-a-real-key-123`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
    });
    expect(res.status).toBe(401);
    const id = res.headers.get("x-request-id") as string;
    await untilLogged(gw, id, "request completed");
    const lines = linesOf(gw, id);
    expect(lines.map((l) => l.msg)).toEqual(["request completed"]);
    const [line] = lines;
    expect(line?.level).toBe(30);
    expect(line?.req).toEqual({
      method: "POST",
      url: "/v1beta/models/gemini-2.5-flash:generateContent?key=[redacted]",
      remoteAddress: "127.0.0.1",
    });
    expect(line?.res).toEqual({ statusCode: 401 });
    expect(line?.responseTime).toBeGreaterThan(0);
    expect(gw.logs.join("\n")).not.toContain("sk-not-a-real-key-123");
  });

  it("logs the arrival of a request too at debug", async () => {
    const res = await fetch(`${debugGw.url}/audioa/fetch/task_unknown`);
    expect(res.status).toBe(401);
    const id = res.headers.get("x-request-id") as string;
    await untilLogged(debugGw, id, "request completed");
    const lines = linesOf(debugGw, id);
    expect(lines.map((l) => l.msg)).toEqual(["incoming request", "request completed"]);
    expect(lines[0]?.level).toBe(20);
    expect(lines[0]?.req?.url).toBe("/audioa/fetch/task_unknown");
  });
});

describe("request loggers", () => {
  const root = () => {
    const lines: Record<string, unknown>[] = [];
    const stream = { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) };
    return { lines, logger: pino(loggerOptions("info"), stream) as unknown as FastifyBaseLogger };
  };

  it("bind the request id to what is logged through them, at the root's level, with the root's redaction", () => {
    const { lines, logger } = root();
    const log = requestLoggerFactory(logger, { reqId: "req-1" }, {});
    log.debug("not at info");
    log.info({ headers: { authorization: "Bearer sk-secret-1" } }, "through the request");
    log.error(new Error("it broke"), "failed");
    expect(lines.map((l) => [l.reqId, l.msg])).toEqual([
      ["req-1", "through the request"],
      ["req-1", "failed"],
    ]);
    expect(JSON.stringify(lines)).not.toContain("sk-secret-1");
    expect(lines[1]?.err).toMatchObject({ message: "it broke" });
    expect(log.level).toBe("info");
  });

  it("keep a route's own level", () => {
    const { lines, logger } = root();
    const log = requestLoggerFactory(logger, { reqId: "req-2" }, { level: "warn" });
    log.info("below the route's level");
    log.warn("at it");
    expect(lines.map((l) => l.msg)).toEqual(["at it"]);
    expect(log.level).toBe("warn");
  });
});

describe("the access line written directly", () => {
  it("is the line pino writes for the same fields, key for key, in the same order", () => {
    const lines: string[] = [];
    const logger = pino(loggerOptions("info"), { write: (line: string) => void lines.push(line) });
    const controller = new AccessLogController(logger as unknown as FastifyBaseLogger);
    const reply = { statusCode: 201, elapsedTime: 3.25, log: logger };
    const request = { id: 'id-"1"', method: "POST", url: "/v1beta/models/m:generateContent?key=sk-x1", ip: "::1" };
    controller.requestCompleted(null, request as never, reply as never);
    controller.requestCompleted(null, { ...request, ip: undefined } as never, reply as never);
    // The fields as they are, with no serializer of the root's applied: what the general path wrote.
    const plain = logger.child({}, { serializers: { req: (f: unknown) => f, res: (f: unknown) => f } });
    plain.info(
      {
        reqId: 'id-"1"',
        req: { method: "POST", url: "/v1beta/models/m:generateContent?key=[redacted]", remoteAddress: "::1" },
        res: { statusCode: 201 },
        responseTime: 3.25,
      },
      "request completed",
    );
    const withoutTime = (line: string | undefined) => (line ?? "").replace(/,"time":\d+/, "");
    expect(lines).toHaveLength(3);
    expect(withoutTime(lines[0])).toBe(withoutTime(lines[2]));
    expect(JSON.parse(lines[1] ?? "").req).toEqual({
      method: "POST",
      url: "/v1beta/models/m:generateContent?key=[redacted]",
    });
  });
});

describe("the gathering log destination", () => {
  const tempFile = () => path.join(mkdtempSync(path.join(os.tmpdir(), "gateway-log-")), "out.log");
  // The destination opens its file asynchronously: no file yet is no line yet.
  const lineCount = (file: string) =>
    existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0;

  it("writes every line, in order, in far fewer write calls than lines logged turn after turn", async () => {
    const file = tempFile();
    const writes = vi.spyOn(fs, "write");
    try {
      // An open descriptor, as the gateway's stdout is.
      const fd = fs.openSync(file, "a");
      const destination = gatheringDestination(fd);
      const logger = pino(loggerOptions("info"), destination.stream);
      // One line per timer turn, as requests answered one at a time: each turn's write would have
      // ended before the next line, so a destination that writes at once writes every line alone.
      for (let i = 0; i < 200; i++) {
        logger.info({ i }, "request completed");
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      await destination.stop();
      const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
      expect(lines.map((l) => (JSON.parse(l) as { i: number }).i)).toEqual(Array.from({ length: 200 }, (_, i) => i));
      const calls = writes.mock.calls.filter((c) => c[0] === fd);
      expect(calls.length).toBeGreaterThan(0);
      expect(calls.length).toBeLessThan(30);
    } finally {
      writes.mockRestore();
    }
  });

  it("writes a lone line of a quiet gateway within a short while, without waiting for more", async () => {
    const file = tempFile();
    const destination = gatheringDestination(file);
    const logger = pino(loggerOptions("info"), destination.stream);
    logger.info("request completed");
    const end = Date.now() + 5000;
    while (lineCount(file) === 0 && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(lineCount(file)).toBe(1);
    await destination.stop();
  });

  /** Runs `body` in a process of its own with `logger`, a pino logger on a gathering destination over `file`'s descriptor (as over stdout), and `destination`; the lines' `i`. */
  const linesOfProcess = (file: string, body: string): number[] => {
    const script = `
      const { gatheringDestination } = await import(${JSON.stringify(path.resolve("dist/logging/destination.js"))});
      const pino = (await import("pino")).default;
      const fd = (await import("node:fs")).openSync(${JSON.stringify(file)}, "a");
      const destination = gatheringDestination(fd);
      const logger = pino({}, destination.stream);
      ${body}`;
    fs.rmSync(file, { force: true });
    execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: process.cwd() });
    return readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { i: number }).i);
  };

  it("writes every gathered line when the process exits before the next write", () => {
    const file = tempFile();
    // Logs and exits at once: no timer turn, no stop. 30 lines are fewer than a gathering, 300 more
    // than one: the first gathering's write may still be under way at exit and land after the rest,
    // so the lines are counted, not their order.
    for (const count of [30, 300]) {
      const seen = linesOfProcess(
        file,
        `for (let i = 0; i < ${count}; i++) logger.info({ i }, "request completed");
        process.exit(0);`,
      );
      expect(seen.sort((x, y) => x - y)).toEqual(Array.from({ length: count }, (_, i) => i));
    }
  });

  it("writes the lines logged after its stop when the process exits (a gateway's last lines)", () => {
    const file = tempFile();
    const seen = linesOfProcess(
      file,
      `logger.info({ i: 0 }, "shutting down");
      await destination.stop();
      logger.info({ i: 1 }, "stopped");
      process.exit(0);`,
    );
    expect(seen).toEqual([0, 1]);
  });
});

describe("the logged URL", () => {
  it("is blanked every time it holds a secret, however often the same clean URLs came before", () => {
    const secret = "/v1beta/models/m:generateContent?alt=sse&key=s3cret";
    const clean = "/v1beta/models/m:generateContent?alt=sse";
    const blanked = "/v1beta/models/m:generateContent?alt=sse&key=[redacted]";
    for (let round = 0; round < 3; round++) {
      expect(redactUrl(clean)).toBe(clean);
      expect(redactUrl(secret)).toBe(blanked);
      expect(redactUrl("/tasks/callback/abc123/x")).toBe("/tasks/callback/[redacted]/x");
    }
    // More distinct clean URLs than are remembered: the answers stay the same.
    for (let i = 0; i < 3000; i++)
      expect(redactUrl(`/audioa/fetch/task_${i}?x=${i}`)).toBe(`/audioa/fetch/task_${i}?x=${i}`);
    expect(redactUrl(secret)).toBe(blanked);
    expect(redactUrl(`${clean}#part`)).toBe(clean);
    expect(redactUrl(`${"/a".repeat(400)}?%6Bey=k`)).toBe(`${"/a".repeat(400)}?%6Bey=[redacted]`);
  });
});

/** Every run of `length` characters of `secret`. */
const runsOf = (secret: string, length = 8): string[] =>
  Array.from({ length: secret.length - length + 1 }, (_, i) => secret.slice(i, i + length));

/** Every byte of `text` percent-encoded. */
const percentAll = (text: string) =>
  [...Buffer.from(text)].map((b) => `%${b.toString(16).padStart(2, "0").toUpperCase()}`).join("");

describe("a token in the logged URL, whatever its spelling", () => {
  let gw: TestGateway;
  let token: string;
  beforeAll(async () => {
    gw = await startTestGateway("sqlite", { logLevel: "debug" });
    token = (await gw.createUser({ quota: 1_000_000 })).key;
  });
  afterAll(async () => {
    await gw?.close();
  });

  const content = "/v1beta/models/gemini-2.5-flash:generateContent";
  const spellings: Array<[string, (token: string) => string]> = [
    ["a NUL after the name", (t) => `${content}?key%00=${t}`],
    ["brackets after the name", (t) => `${content}?key[]=${t}`],
    ["encoded brackets after the name", (t) => `${content}?key%5B%5D=${t}`],
    ["an index in brackets", (t) => `${content}?alt=sse&key[0]=${t}`],
    ["spaces around the name", (t) => `${content}?%20key%09=${t}`],
    ["an encoded letter", (t) => `${content}?%6Bey=${t}`],
    ["a matrix parameter on the path", (t) => `${content};key=${t}`],
    ["a matrix parameter in the query", (t) => `${content}?alt=sse;key=${t}`],
    ["a path segment", (t) => `/v1/models/${t}`],
    ["a path segment before more path", (t) => `/v1/models/${t}/more`],
    ["a percent-encoded path segment", (t) => `/v1/models/${percentAll(t)}`],
    ["a parameter of any name", (t) => `/audioa/fetch/task_x?note=${t}`],
  ];

  it.each(spellings)("is blanked when given with %s", async (_what, urlOf) => {
    const before = gw.logs.length;
    const res = await callGateway(gw.url, "GET", urlOf(token));
    const id = res.headers["x-request-id"] as string;
    await untilLogged(gw, id, "request completed");
    const lines = linesOf(gw, id);
    expect(lines.map((l) => l.msg)).toEqual(["incoming request", "request completed"]);
    for (const line of lines) expect(line.req?.url).toContain("[redacted]");
    const text = gw.logs.slice(before).join("\n");
    for (const run of runsOf(token)) {
      expect(text).not.toContain(run);
      expect(text).not.toContain(percentAll(run));
    }
  });

  it("leaves an ordinary URL as it is", async () => {
    const ordinary = [
      "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
      "/audioa/fetch/task_2bT0rQk9ZpXc4Lm7Nv8Wd1Ys",
      "/v1/videos/vid_2bT0rQk9ZpXc4Lm7Nv8Wd1YsAbCdEfGh/content?variant=video",
      "/v1/models/gpt-4o-mini-realtime-preview-2024-12-17",
      "/v1/models/text-multilingual-embedding-002?page_size=50&page_token=",
      "/api/admin/logs?request_id=0193a4b2-7c1d-7e2f-8a3b-4c5d6e7f8a9b&limit=20",
      "/audioa/fetch?ids=task_2bT0rQk9ZpXc4Lm7Nv8Wd1Ys,task_2bT0rQk9ZpXc4Lm7Nv8Wd1Yt",
    ];
    for (const url of ordinary) {
      const res = await callGateway(gw.url, "GET", url);
      const id = res.headers["x-request-id"] as string;
      await untilLogged(gw, id, "request completed");
      expect(linesOf(gw, id).map((l) => l.req?.url)).toEqual([url, url]);
    }
  });
});

describe("the shape of a key in the logged URL", () => {
  const random62 = "q7Rz0pLk3VbN8mXc2TfW9yHs4GdJ6aKe1UoI5nBvQ0rZ"; // 44 characters
  it.each([
    // Known prefixes and 16 characters more, whatever the rest is.
    ["/v1/models/sk-abcdefghijklmnop:generateContent", "/v1/models/[redacted]:generateContent"],
    ["/v1/x?q=adm-0123456789abcdef", "/v1/x?q=[redacted]"],
    ["/v1/x/AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6", "/v1/x/[redacted]"],
    ["/v1/x?u=ghp_0123456789abcdefABCD&v=1", "/v1/x?u=[redacted]&v=1"],
    // Random text of 40 characters or more, after its kind words.
    [`/files/${random62.slice(0, 40)}.png`, "/files/[redacted].png"],
    [`/v1/x/report_${random62}`, "/v1/x/[redacted]"],
    [`/v1/x?id=${"0123456789abcdef".repeat(4)}`, "/v1/x?id=[redacted]"],
    // Names judged after decoding and normalising; matrix parameters too.
    ["/v1/x?%256Bey=abc", "/v1/x?%256Bey=[redacted]"],
    ["/v1/x?API_KEY%5B0%5D=abc&alt=sse", "/v1/x?API_KEY%5B0%5D=[redacted]&alt=sse"],
    ["/v1/x;a=1;Token=abc/y", "/v1/x;a=1;Token=[redacted]/y"],
    ["/v1/x?alt=sse;access_token=abc", "/v1/x?alt=sse;access_token=[redacted]"],
    // A key in a parameter's name, or a parameter with no value.
    [`/v1/x?sk-${random62}`, "/v1/x?[redacted]"],
    // A key encoded twice over is judged decoded, and its piece blanked whole.
    [`/v1/x/${encodeURIComponent(encodeURIComponent(`sk-${random62}`).replace(/-/g, "%2D"))}/y`, "/v1/x/[redacted]/y"],
  ])("%s is logged as %s", (url, logged) => {
    expect(redactUrl(url)).toBe(logged);
  });

  it.each([
    "/audioa/fetch/task_2bT0rQk9ZpXc4Lm7Nv8Wd1Ys",
    "/v1/videos/generate_record_2bT0rQk9ZpXc4Lm7Nv8Wd1YsAbCdEfGh",
    "/v1/models/claude-3-5-sonnet-20241022-v2-with-a-long-lowercase-name",
    "/v1beta/models/gemini-2.5-flash-preview-native-audio-dialog:streamGenerateContent?alt=sse",
    "/api/admin/logs/0193a4b2-7c1d-7e2f-8a3b-4c5d6e7f8a9b",
    "/v1/x?keyword=abc&tokens=12&monkey=1",
    "/v1/x?q=a%20b%2Fc&page=2;lang=en",
  ])("%s is logged as it is", (url) => {
    expect(redactUrl(url)).toBe(url);
  });
});
