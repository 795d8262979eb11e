import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayError } from "../core/errors.js";
import { sineWav } from "../simulator/media.js";
import { uploadIntake } from "./fetch-upload.js";
import { GuardedFetcher } from "./guarded-fetch.js";

const WAV = sineWav({ seconds: 0.1 });
let server: http.Server;
let base = "";
const stored: Array<{ bytes: number; type: string; family: string }> = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const query = new URL(req.url ?? "/", "http://x").searchParams;
    const bytes = query.get("bytes") === "html" ? Buffer.from(`<html>${" ".repeat(2048)}</html>`) : WAV;
    res.writeHead(200, { "content-type": query.get("type") ?? "audio/mpeg" }).end(bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function intake(options: { allowPrivate: boolean; maxBytes?: number }) {
  return uploadIntake({
    fetcher: new GuardedFetcher({ allowPrivate: options.allowPrivate }),
    maxBytes: options.maxBytes ?? 4096,
    timeoutMs: 5000,
    store: async (bytes, type, family) => {
      stored.push({ bytes: bytes.length, type, family });
      return { url: `https://gw.example/${family}/files/k.bin`, discard: async () => {} };
    },
  });
}

async function refusal(run: Promise<unknown>): Promise<GatewayError> {
  try {
    await run;
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error("not refused");
}

describe("an upload's file intake", () => {
  it("stores an audio file under the type's own name and answers the gateway's URL", async () => {
    stored.length = 0;
    const file = await intake({ allowPrivate: true }).bringIn(`${base}/a?type=audio/x-wav`, "url", "audiob");
    expect(file).toMatchObject({
      url: "https://gw.example/audiob/files/k.bin",
      contentType: "audio/wav",
      bytes: WAV.length,
    });
    expect(stored).toEqual([{ bytes: WAV.length, type: "audio/wav", family: "audiob" }]);
  });

  it("refuses loopback and private addresses unless the operator allows them", async () => {
    const err = await refusal(intake({ allowPrivate: false }).bringIn(`${base}/a`, "url", "audioa"));
    expect(err.errorName).toBe("GW_ERR_VALIDATION");
    expect(err.message).toMatch(/^body\.url points to an address the gateway may not fetch/);
  });

  it("refuses a file over the size limit, a type that is not audio and bytes that are not, naming the field", async () => {
    stored.length = 0;
    const big = await refusal(intake({ allowPrivate: true, maxBytes: 1024 }).bringIn(`${base}/a`, "url", "audioa"));
    expect(big.message).toBe("body.url is larger than the upload limit of 1024 bytes");
    const posing = await refusal(intake({ allowPrivate: true }).bringIn(`${base}/a?bytes=html`, "url", "audioa"));
    expect(posing.message).toBe("body.url answered bytes that are not an audio file (declared audio/mpeg)");
    const html = await refusal(intake({ allowPrivate: true }).bringIn(`${base}/a?type=text/html`, "url", "audioa"));
    expect(html.message).toContain('body.url answered content type "text/html"');
    expect(stored).toEqual([]);
  });
});
