import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { callUpstream, readJson } from "./http.js";

describe("an upstream call's deadline", () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === "/slow") return; // never answers: the deadline ends the call
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ ok: true }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("is cleared once the answer is read, so calls leave no timer behind", async () => {
    // The 10-minute deadline timers the calls start, and the timers cleared.
    const started: unknown[] = [];
    const cleared = new Set<unknown>();
    const set = vi.spyOn(globalThis, "setTimeout");
    const clear = vi.spyOn(globalThis, "clearTimeout");
    try {
      for (let i = 0; i < 20; i++) {
        const res = await callUpstream({ method: "POST", url: `${url}/fast`, json: { i }, timeoutMs: 600_000 });
        expect(await readJson(res, url)).toEqual({ ok: true });
      }
      await new Promise((resolve) => setImmediate(resolve));
      set.mock.calls.forEach((args, i) => {
        if (args[1] === 600_000) started.push(set.mock.results[i]?.value);
      });
      for (const args of clear.mock.calls) cleared.add(args[0]);
    } finally {
      set.mockRestore();
      clear.mockRestore();
    }
    expect(started).toHaveLength(20);
    expect(started.filter((timer) => !cleared.has(timer))).toHaveLength(0);
  });

  it("still ends a call whose answer does not come in time", async () => {
    await expect(callUpstream({ method: "GET", url: `${url}/slow`, timeoutMs: 100 })).rejects.toThrow(/timed out/);
  });
});
