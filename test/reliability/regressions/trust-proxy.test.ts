import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config/load.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { bearer, callGateway } from "../harness.js";

/**
 * `TRUST_PROXY=true` let any client write its own address into X-Forwarded-For: an IP-allowlist
 * 403 became a 200 and the failed-authentication limit could be dodged. It is refused at start now;
 * a hop count or a list of proxy addresses says which hops to believe.
 */
describe("TRUST_PROXY at start", () => {
  it.each(["true", "TRUE", "yes", "on"])("TRUST_PROXY=%s is refused, saying why and what to write", (value) => {
    const attempt = () => loadConfig({ TRUST_PROXY: value });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/X-Forwarded-For/);
    expect(attempt).toThrow(/TRUST_PROXY=1/);
    expect(attempt).toThrow(/10\.0\.0\.0\/8/);
  });

  it("a config file's trustProxy: true is refused the same way", () => {
    expect(() => loadConfig({}, { trustProxy: true as unknown as false })).toThrow(/X-Forwarded-For/);
  });

  it.each([
    ["10.0.0.0/8,proxy.internal", "proxy.internal"],
    ["10.0.0.0/40", "10.0.0.0/40"],
    ["*", "*"],
  ])("a list with an entry that is not an address or a range (%s) is refused, naming it", (value, bad) => {
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(`"${bad}" is not a proxy address`);
  });

  it.each([
    ["", false],
    ["false", false],
    ["0", false],
    ["2", 2],
    ["127.0.0.1", "127.0.0.1"],
    ["10.0.0.0/8, 192.168.1.5, fd00::/8", "10.0.0.0/8, 192.168.1.5, fd00::/8"],
    ["loopback,uniquelocal", "loopback,uniquelocal"],
  ] as const)("TRUST_PROXY=%j is accepted", (value, expected) => {
    expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });
});

describe.each([
  ["a hop count", 1 as const],
  ["the proxy's address", "127.0.0.1"],
])("behind one trusted proxy (%s)", (_name, trustProxy) => {
  let gw: TestGateway;
  beforeAll(async () => {
    // The test client plays the proxy: it connects from 127.0.0.1 and appends the client it serves.
    gw = await startTestGateway("sqlite", { logLevel: "warn", trustProxy, limits: { authFailuresPerMinute: 3 } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  const from = (chain: string) => ({ "x-forwarded-for": chain });

  it("an address a client writes itself cannot pass a token's IP allowlist", async () => {
    const user = await gw.createUser({ token: { ipAllow: ["203.0.113.5"] } });
    const body = { ids: ["task_x"] };
    const allowed = await callGateway(gw.url, "POST", "/audioa/fetch", {
      headers: { ...bearer(user.key), ...from("203.0.113.5") },
      body,
    });
    expect(allowed.status, allowed.text).toBe(200);
    // The client sent "203.0.113.5" itself; the proxy appended the address it really came from.
    const spoofed = await callGateway(gw.url, "POST", "/audioa/fetch", {
      headers: { ...bearer(user.key), ...from("203.0.113.5, 198.51.100.9") },
      body,
    });
    expect(spoofed.status, spoofed.text).toBe(403);
    expect(spoofed.text).toContain("198.51.100.9");
  });

  it("bad keys slow down the address they come from, not the other clients of the proxy, and never a valid key", async () => {
    const user = await gw.createUser();
    const body = { ids: ["task_x"] };
    const guess = (chain: string, i: number) =>
      callGateway(gw.url, "POST", "/audioa/fetch", { headers: { ...bearer(`sk-guess-${i}`), ...from(chain) }, body });
    const guesser = `198.51.100.${Math.floor(Math.random() * 200) + 20}`;
    for (let i = 0; i < 3; i++) expect((await guess(guesser, i)).status).toBe(401);
    expect((await guess(guesser, 3)).status).toBe(429);
    // Another client behind the same proxy is judged by its own address.
    expect((await guess("198.51.100.2", 4)).status).toBe(401);
    // A spoofed first entry does not move the guesser to another address.
    expect((await guess(`198.51.100.3, ${guesser}`, 5)).status).toBe(429);
    // The guesser's address with a valid token, or with the admin key, is not slowed.
    const valid = await callGateway(gw.url, "POST", "/audioa/fetch", {
      headers: { ...bearer(user.key), ...from(guesser) },
      body,
    });
    expect(valid.status).toBe(200);
    const admin = await callGateway(gw.url, "GET", "/api/admin/users", {
      headers: { "x-admin-key": gw.adminKey, ...from(guesser) },
    });
    expect(admin.status).toBe(200);
  });
});

describe("without TRUST_PROXY", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway("sqlite", { logLevel: "warn" });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("X-Forwarded-For is ignored: the connection's address decides", async () => {
    const user = await gw.createUser({ token: { ipAllow: ["203.0.113.5"] } });
    const res = await callGateway(gw.url, "POST", "/audioa/fetch", {
      headers: { ...bearer(user.key), "x-forwarded-for": "203.0.113.5" },
      body: { ids: ["task_x"] },
    });
    expect(res.status).toBe(403);
  });
});
