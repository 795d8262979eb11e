import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UpstreamError } from "../../src/core/upstream-error.js";
import { callUpstream } from "../../src/upstreams/http.js";
import { type LocalUpstream, listenLocal, recording, type SeenRequest } from "../support/local-upstream.js";

describe("an upstream call's target", () => {
  let upstream: LocalUpstream;
  let base: string;
  const seen: SeenRequest[] = [];

  beforeAll(async () => {
    upstream = await listenLocal(
      recording(seen, (_req, res) => {
        res.setHeader("content-type", "application/json");
        res.end('{"ok":true}');
      }),
    );
    base = upstream.base;
  });
  afterAll(() => upstream.close());

  it("reaches the URL's path with its query, without its fragment, each time it is called", async () => {
    seen.length = 0;
    for (const [url, path] of [
      [`${base}/v1beta/models/m:streamGenerateContent?alt=sse#part`, "/v1beta/models/m:streamGenerateContent?alt=sse"],
      [`${base}/v1/chat/completions`, "/v1/chat/completions"],
      [`${base}/v1beta/models/m:streamGenerateContent?alt=sse#part`, "/v1beta/models/m:streamGenerateContent?alt=sse"],
      [`${base}/a%20b/c?x=1&y=%2F`, "/a%20b/c?x=1&y=%2F"],
    ] as const) {
      const res = await callUpstream({ method: "POST", url, json: { path } });
      expect(res.statusCode).toBe(200);
      expect(await res.body.json()).toEqual({ ok: true });
      expect(seen.at(-1)).toEqual({
        method: "POST",
        url: path,
        body: JSON.stringify({ path }),
        type: "application/json",
      });
    }
  });

  it("sends the call's own headers, and a JSON content type only with a body", async () => {
    seen.length = 0;
    await (await callUpstream({ method: "GET", url: `${base}/a`, headers: { "x-goog-api-key": "k1" } })).body.dump();
    await (
      await callUpstream({ method: "POST", url: `${base}/b`, jsonText: "[1]", headers: { "x-goog-api-key": "k2" } })
    ).body.dump();
    expect(seen).toEqual([
      { method: "GET", url: "/a", body: "", key: "k1" },
      { method: "POST", url: "/b", body: "[1]", type: "application/json", key: "k2" },
    ]);
  });

  it("refuses a URL that is not http(s) as an upstream failure, before anything is sent", async () => {
    seen.length = 0;
    for (const url of ["ftp://127.0.0.1/x", "not a url", `${base.replace("http:", "file:")}/x`]) {
      const failure = await callUpstream({ method: "GET", url }).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(UpstreamError);
      expect((failure as UpstreamError).kind).toBe("retryable");
    }
    expect(seen).toEqual([]);
  });
});
