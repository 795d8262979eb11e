import { mkdtempSync, rmSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/cli/admin.js";
import { CALL_SETTINGS } from "../../src/core/channel-settings.js";
import type { VendorAdapter } from "../../src/core/vendor-adapter.js";
import { VendorRegistry } from "../../src/core/vendor-registry.js";
import { ChannelProbe } from "../../src/routing/channel-probe.js";
import { vendors } from "../../src/upstreams/registry.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { type LocalUpstream, listenLocal } from "../support/local-upstream.js";

const KEY = "vendor-probe-key-0123456789";

/** What each type serves, as operators have known it: the registry must say the same. */
const SERVES: Record<string, { capabilities: string[]; task_platforms: string[] }> = {
  "task-relay": { capabilities: ["tasks"], task_platforms: ["audioa"] },
  "generate-record": { capabilities: ["tasks"], task_platforms: ["audiob"] },
  gemini: { capabilities: ["content", "chat", "images", "embeddings"], task_platforms: [] },
  "openai-images": { capabilities: ["images"], task_platforms: [] },
  "openai-chat": { capabilities: ["chat", "embeddings"], task_platforms: [] },
  anthropic: { capabilities: ["chat"], task_platforms: [] },
  "openai-videos": { capabilities: ["videos"], task_platforms: ["video"] },
  deepseek: { capabilities: ["chat"], task_platforms: [] },
};

/** The call each type's probe makes: method, path, and the header that carries the key. */
const PROBES: Record<string, { method: string; url: string; keyHeader: string }> = {
  "task-relay": { method: "POST", url: "/audioa/fetch", keyHeader: "authorization" },
  "generate-record": { method: "GET", url: "/api/v1/generate/record-info?taskId=probe", keyHeader: "authorization" },
  gemini: { method: "GET", url: "/v1beta/models?pageSize=1", keyHeader: "x-goog-api-key" },
  "openai-images": { method: "GET", url: "/v1/models", keyHeader: "authorization" },
  "openai-chat": { method: "GET", url: "/v1/models", keyHeader: "authorization" },
  anthropic: { method: "GET", url: "/v1/models", keyHeader: "x-api-key" },
  "openai-videos": { method: "GET", url: "/v1/models", keyHeader: "authorization" },
  deepseek: { method: "GET", url: "/v1/models", keyHeader: "authorization" },
};

interface Probed {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
}

/** The key a request carries, in whichever header its protocol uses. */
function keyOf(headers: IncomingMessage["headers"]): string | undefined {
  const bearer = headers.authorization?.replace(/^Bearer /, "");
  return (headers["x-api-key"] as string | undefined) ?? (headers["x-goog-api-key"] as string | undefined) ?? bearer;
}

/** An upstream that records every call and refuses (401) a key other than KEY. */
async function probeRecorder(): Promise<LocalUpstream & { seen: Probed[] }> {
  const seen: Probed[] = [];
  const upstream = await listenLocal((req, res) => {
    req.resume();
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
      res.writeHead(keyOf(req.headers) === KEY ? 200 : 401, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  return Object.assign(upstream, { seen });
}

async function cli(dir: string, args: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await runAdminCommand(args, {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    env: {
      ...process.env,
      DATABASE_URL: `sqlite:${path.join(dir, "gateway.sqlite")}`,
      DATA_DIR: dir,
      ADMIN_KEY: "",
      CONFIG_FILE: "",
      LOG_LEVEL: "warn",
    },
  });
  return { code, stdout, stderr };
}

describe("one vendor registry: the channel types, what each serves and how it is probed", () => {
  let gw: TestGateway;
  let upstream: Awaited<ReturnType<typeof probeRecorder>>;
  const dir = mkdtempSync(path.join(os.tmpdir(), "mg-vendors-"));

  beforeAll(async () => {
    upstream = await probeRecorder();
    gw = await startTestGateway("sqlite", { logLevel: "warn" });
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("lists every channel type with what it serves and the settings its calls read", async () => {
    const res = await gw.admin("GET", "/channel-types");
    expect(res.status).toBe(200);
    const listed = res.body.data as Array<{
      type: string;
      description: string;
      capabilities: string[];
      task_platforms: string[];
      settings: Array<{ name: string; description: string; schema: Record<string, unknown> }>;
    }>;
    expect(listed.map((t) => t.type)).toEqual(vendors.types);
    expect(Object.keys(SERVES).every((type) => vendors.types.includes(type))).toBe(true);
    for (const t of listed) {
      if (SERVES[t.type]) expect({ type: t.type, ...SERVES[t.type] }).toEqual({ type: t.type, ...pick(t) });
      expect(t.description).not.toBe("");
      // Every type reads the call's time limits and its concurrency.
      expect(t.settings.map((s) => s.name)).toEqual(expect.arrayContaining(["timeout_ms", "concurrency"]));
    }
    const videos = listed.find((t) => t.type === "openai-videos");
    expect(videos?.settings.find((s) => s.name === "polls_per_second")).toMatchObject({
      description: "polls a second (openai-videos)",
      schema: { type: "number", exclusiveMinimum: 0, maximum: 1000 },
    });
    expect(listed.find((t) => t.type === "task-relay")?.settings.map((s) => s.name)).toEqual(
      expect.arrayContaining(["batch_size", "prefix"]),
    );
    expect(listed.find((t) => t.type === "openai-chat")?.settings.map((s) => s.name)).not.toContain("prefix");
  });

  it("takes a channel's type from the registry: a listed one is created, another refused naming `type`", async () => {
    const made = await gw.admin("POST", "/channels", {
      name: "videos",
      type: "openai-videos",
      base_url: upstream.base,
      key: KEY,
      models: ["sora-2"],
    });
    expect(made.status).toBe(200);
    expect(made.body.data.type).toBe("openai-videos");
    const refused = await gw.admin("POST", "/channels", {
      name: "nobody",
      type: "no-such-vendor",
      base_url: upstream.base,
      key: KEY,
      models: ["m"],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain("type");
  });

  it("tests a channel of each type with its vendor's probe: the right call, the key in the right header", async () => {
    for (const type of vendors.types) {
      const expected = PROBES[type];
      if (!expected) throw new Error(`no expected probe for ${type}`);
      for (const key of [KEY, "a-wrong-key-0000"]) {
        const made = await gw.admin("POST", "/channels", {
          name: `probe ${type} ${key}`,
          type,
          base_url: upstream.base,
          key,
          models: type === "task-relay" ? ["audioa"] : ["m"],
        });
        expect(made.status, JSON.stringify(made.body)).toBe(200);
        upstream.seen.length = 0;
        const tested = await gw.admin("POST", `/channels/${made.body.data.id}/test`);
        expect(tested.status).toBe(200);
        expect(upstream.seen).toHaveLength(1);
        const call = upstream.seen[0] as Probed;
        expect({ type, method: call.method, url: call.url }).toEqual({
          type,
          method: expected.method,
          url: expected.url,
        });
        expect(String(call.headers[expected.keyHeader])).toContain(key);
        expect({ type, key, ok: tested.body.data.ok }).toEqual({ type, key, ok: key === KEY });
        if (key !== KEY) expect(tested.body.data.error).toBe("the upstream answered HTTP 401");
      }
    }
  });

  it("probes a disabled channel with the probe of its type's adapter, whatever the registry holds", async () => {
    const fake: VendorAdapter = {
      type: "openai-chat",
      description: "a vendor of this test",
      settings: CALL_SETTINGS,
      probe: (channel) => ({
        method: "GET",
        url: `${channel.baseUrl}/probe-of-the-adapter`,
        headers: { authorization: `Bearer ${channel.key}` },
      }),
    };
    const ctx = gw.gateway.ctx;
    const id = await gw.createChannel({ type: "openai-chat", baseUrl: upstream.base, key: KEY, models: ["fake-m"] });
    await ctx.channels.update(id, { status: "auto_disabled", statusReason: "test" });
    upstream.seen.length = 0;
    const probe = new ChannelProbe(ctx.channels, new VendorRegistry([fake]), async () => {}, 60_000, ctx.logger);
    expect(await probe.runOnce()).toContain(id);
    expect(upstream.seen.map((s) => s.url)).toContain("/probe-of-the-adapter");
    expect((await ctx.channels.get(id))?.status).toBe("enabled");
  });

  it("gives the command line the same list, and its channel create the same types", async () => {
    const listed = await cli(dir, ["channel", "types", "--json"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual((await gw.admin("GET", "/channel-types")).body.data);
    const human = await cli(dir, ["channel", "types"]);
    expect(human.stdout).toMatch(/openai-videos\s+\["videos"\]/);
    const help = await cli(dir, ["channel", "create", "--help"]);
    expect(help.stdout + help.stderr).toContain(`--type ${vendors.types.join("|")}`);
    const refused = await cli(dir, [
      "channel",
      "create",
      "--name",
      "x",
      "--type",
      "no-such-vendor",
      "--base-url",
      upstream.base,
      "--key",
      KEY,
      "--models",
      "m",
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("type");
  });
});

function pick(t: { capabilities: string[]; task_platforms: string[] }) {
  return { capabilities: t.capabilities, task_platforms: t.task_platforms };
}

describe("the vendor registry", () => {
  it("refuses a type registered twice", () => {
    const adapter = vendors.of("openai-chat") as VendorAdapter;
    expect(() => new VendorRegistry([adapter, adapter])).toThrow("channel type openai-chat is registered twice");
  });

  it("derives what serves each capability from the adapters", () => {
    for (const capability of ["content", "chat", "images", "tasks", "videos"] as const) {
      const expected = Object.entries(SERVES)
        .filter(([, s]) => s.capabilities.includes(capability))
        .map(([type]) => type);
      expect(vendors.serving(capability).filter((t) => t in SERVES)).toEqual(expected);
    }
    expect(vendors.doing("video:CREATE")).toEqual(["openai-videos"]);
    expect(vendors.doing("audioa:MUSIC")).toEqual(["task-relay"]);
  });
});
