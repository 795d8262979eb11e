import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isBlockedAddress } from "../../src/net/address-policy.js";
import { GuardedFetcher } from "../../src/net/guarded-fetch.js";

describe("address policy", () => {
  it.each([
    "127.0.0.1",
    "127.255.0.9",
    "10.0.0.1",
    "172.16.5.4",
    "192.168.1.1",
    "169.254.169.254",
    "100.100.100.200",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fd00:ec2::254",
    "fc00::1",
    "::ffff:127.0.0.1",
    "::ffff:10.1.2.3",
    "64:ff9b::a9fe:a9fe",
    "2002:c0a8:0101::1",
    "ff02::1",
    "not-an-ip",
  ])("refuses %s", (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2001:4860:4860::8888", "::ffff:8.8.8.8"])(
    "allows the public address %s",
    (address) => {
      expect(isBlockedAddress(address)).toBe(false);
    },
  );
});

describe("guarded fetch", () => {
  let server: http.Server;
  let base: string;
  let port: number;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === "/to-private") res.writeHead(302, { location: "http://10.0.0.1/secret" }).end();
      else if (req.url === "/to-metadata") res.writeHead(301, { location: "http://169.254.169.254/latest/" }).end();
      else if (req.url === "/to-localhost") res.writeHead(302, { location: `http://localhost:${port}/ok` }).end();
      else if (req.url === "/loop") res.writeHead(302, { location: "/loop" }).end();
      else if (req.url === "/stream") {
        res.writeHead(200, { "content-type": "image/png" });
        for (let i = 0; i < 10; i++) res.write(Buffer.alloc(1024));
        res.end();
      } else if (req.url === "/silent") {
        // Never answers: the deadline must end the call.
      } else res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const limits = { maxBytes: 4096, timeoutMs: 2000 };

  it("refuses loopback by literal and by resolved name when private addresses are not allowed", async () => {
    const fetcher = new GuardedFetcher({ allowPrivate: false });
    try {
      await expect(fetcher.fetch(`${base}/ok`, limits)).rejects.toMatchObject({ reason: "blocked" });
      await expect(fetcher.fetch(`http://localhost:${port}/ok`, limits)).rejects.toMatchObject({
        reason: "blocked",
        message: expect.stringContaining("localhost"),
      });
    } finally {
      await fetcher.close();
    }
  });

  it("checks every redirect again", async () => {
    // Loopback is allowed explicitly so that the test server can answer; nothing else private is.
    const fetcher = new GuardedFetcher({ allowPrivate: false, allow: ["127.0.0.1/32", "::1/128"] });
    try {
      expect((await fetcher.fetch(`${base}/ok`, limits)).body.toString()).toBe("ok");
      await expect(fetcher.fetch(`${base}/to-private`, limits)).rejects.toMatchObject({
        reason: "blocked",
        message: expect.stringContaining("redirect refused"),
      });
      await expect(fetcher.fetch(`${base}/to-metadata`, limits)).rejects.toMatchObject({ reason: "blocked" });
      // A redirect to a host name is resolved and checked like the first URL.
      expect((await fetcher.fetch(`${base}/to-localhost`, limits)).body.toString()).toBe("ok");
      await expect(fetcher.fetch(`${base}/loop`, limits)).rejects.toMatchObject({ reason: "redirects" });
    } finally {
      await fetcher.close();
    }
  });

  it("stops reading past the size cap even without a content length", async () => {
    const fetcher = new GuardedFetcher({ allowPrivate: true });
    try {
      await expect(fetcher.fetch(`${base}/stream`, limits)).rejects.toMatchObject({ reason: "too_large" });
      expect((await fetcher.fetch(`${base}/stream`, { ...limits, maxBytes: 20_000 })).body.length).toBe(10_240);
    } finally {
      await fetcher.close();
    }
  });

  it("ends a call that never answers at its deadline", async () => {
    const fetcher = new GuardedFetcher({ allowPrivate: true });
    try {
      await expect(fetcher.fetch(`${base}/silent`, { maxBytes: 1024, timeoutMs: 300 })).rejects.toMatchObject({
        reason: "timeout",
      });
    } finally {
      await fetcher.close();
    }
  });

  it("refuses schemes other than http and https", async () => {
    const fetcher = new GuardedFetcher({ allowPrivate: true });
    try {
      await expect(fetcher.fetch("file:///etc/passwd", limits)).rejects.toMatchObject({ reason: "scheme" });
      await expect(fetcher.fetch("ftp://example.com/a.png", limits)).rejects.toMatchObject({ reason: "scheme" });
    } finally {
      await fetcher.close();
    }
  });
});
