import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.js";

const MODEL = "gemini-2.5-flash";

/** An answer as an upstream may format it: spaces between tokens, escaped characters, key order of its own. */
const ANSWER_TEXT =
  '{"candidates": [{"content": {"role": "model", "parts": [{"text": "caf\\u00e9 \\u2014 done"}]}, "finishReason": "STOP"}],' +
  '  "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2, "totalTokenCount": 5}, "modelVersion": "sim"}';

/** A first event whose JSON the upstream split over two `data:` lines. */
const SPLIT_EVENT = [
  'data: {"candidates": [{"content": {"role": "model",',
  'data:  "parts": [{"text": "one "}]}}], "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1, "totalTokenCount": 4}}',
];
const LAST_EVENT_TEXT =
  '{"candidates": [{"content": {"role": "model", "parts": [{"text": "two \\u00e9"}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2, "totalTokenCount": 5}}';

describe("content relay passes the upstream's JSON text through", () => {
  let gw: TestGateway;
  let upstream: http.Server;
  let key: string;
  /** The request bodies the upstream received, as text. */
  const received: string[] = [];

  beforeAll(async () => {
    upstream = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        received.push(Buffer.concat(chunks).toString("utf8"));
        if (req.url?.includes(":streamGenerateContent")) {
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write(`${SPLIT_EVENT.join("\r\n")}\r\n\r\n`);
          res.end(`data: ${LAST_EVENT_TEXT}\r\n\r\n`);
          return;
        }
        res.writeHead(200, { "content-type": "application/json" }).end(ANSWER_TEXT);
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    gw = await startTestGateway("sqlite");
    await gw.createChannel({
      type: "gemini",
      baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
      models: [MODEL],
    });
    ({ key } = await gw.createUser({ quota: 100_000_000 }));
  });
  afterAll(async () => {
    await gw?.close();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  const post = (method: string, body = JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hello" }] }] })) =>
    fetch(`${gw.url}/v1beta/models/${MODEL}:${method}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": key },
      body,
    });

  /** A body as a client may format it: spaces, escaped characters, its own key order. */
  const CLIENT_TEXT =
    '{ "generationConfig" : { "maxOutputTokens": 64 },\n  "contents": [ { "parts": [ { "text": "caf\\u00e9 \\"quoted\\": yes" } ], "role": "user" } ] }';

  it("sends the client's request text upstream as it came, on generateContent and its stream", async () => {
    for (const method of ["generateContent", "streamGenerateContent?alt=sse"]) {
      const before = received.length;
      const res = await post(method, CLIENT_TEXT);
      expect(res.status, method).toBe(200);
      await res.text();
      expect(received.slice(before), method).toEqual([CLIENT_TEXT]);
    }
  });

  it("sends the body it validated, serialised again, when the client's text gives a key twice", async () => {
    // The gateway's parser keeps the last generationConfig; another parser might keep the first.
    const twice =
      '{"contents": [{"parts": [{"text": "hi"}]}], "generationConfig": {"maxOutputTokens": 900000}, "generationConfig": {"maxOutputTokens": 8}}';
    const before = received.length;
    const res = await post("generateContent", twice);
    expect(res.status).toBe(200);
    await res.text();
    expect(received.slice(before)).toHaveLength(1);
    expect(received[before]).toBe(JSON.stringify(JSON.parse(twice)));
    expect(JSON.parse(received[before] as string).generationConfig).toEqual({ maxOutputTokens: 8 });
  });

  it("answers generateContent with the upstream's bytes, unchanged", async () => {
    const res = await post("generateContent");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(await res.text()).toBe(ANSWER_TEXT);
  });

  it("writes each event's upstream text as it came, and an event split over several data lines as one line", async () => {
    const res = await post("streamGenerateContent?alt=sse");
    expect(res.status).toBe(200);
    const body = await res.text();
    const blocks = body.split("\r\n\r\n").filter(Boolean);
    expect(blocks).toHaveLength(2);
    for (const block of blocks) {
      expect(block.startsWith("data: ")).toBe(true);
      expect(block).not.toMatch(/[\r\n]/);
    }
    const joined = SPLIT_EVENT.map((line) => line.replace(/^data: ?/, "")).join("\n");
    expect(JSON.parse((blocks[0] as string).slice(6))).toEqual(JSON.parse(joined));
    expect(blocks[1]).toBe(`data: ${LAST_EVENT_TEXT}`);
  });
});
