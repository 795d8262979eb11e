import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { buildGateway, type Gateway } from "../../src/app/gateway.js";
import { type ConfigOverrides, loadConfig } from "../../src/config/load.js";
import type { ChannelInput } from "../../src/core/channel.js";
import { settingsToApi } from "../../src/core/channel-settings.js";
import type { NewToken } from "../../src/store/tokens.js";
import { createTestDatabase } from "./postgres.js";

export type StoreKind = "sqlite" | "postgres";

export interface TestGateway {
  gateway: Gateway;
  url: string;
  adminKey: string;
  /** Every log line the gateway wrote, for tests that scan logs. */
  logs: string[];
  /** Calls the admin API; returns status and parsed body. */
  admin(method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** A user with the given quota (as an initial top-up) and one token. */
  createUser(options?: { quota?: number; group?: string; token?: Omit<NewToken, "userId" | "name"> }): Promise<{
    userId: number;
    tokenId: number;
    key: string;
  }>;
  createChannel(input: Partial<ChannelInput> & Pick<ChannelInput, "type" | "baseUrl" | "models">): Promise<number>;
  balance(userId: number): Promise<number>;
  /** The gateway's data folder (the SQLite file lives there unless `databaseUrl` was given). */
  dataDir: string;
  close(): Promise<void>;
  /** Deletes what this gateway created for its store (PostgreSQL database, temp folder). */
  dropStore(): Promise<void>;
}

const ADMIN_KEY = "test-admin-key-0123456789abcdef";

/**
 * Starts a real gateway on a free loopback port, on SQLite (temp dir) or PostgreSQL (temp db).
 * `keepStore`: close() leaves the store (PostgreSQL database and temp folder) for another gateway
 * to open (`databaseUrl`, `dataDir`); call dropStore() when done. A given `dataDir` is never deleted
 * by this gateway.
 */
export async function startTestGateway(
  kind: StoreKind = "sqlite",
  overrides: ConfigOverrides = {},
  options: { databaseUrl?: string; keepStore?: boolean; dataDir?: string } = {},
): Promise<TestGateway> {
  const ownDir = options.dataDir === undefined;
  const dir = options.dataDir ?? mkdtempSync(path.join(os.tmpdir(), "mg-test-"));
  let databaseUrl = options.databaseUrl ?? `sqlite:${path.join(dir, "gateway.sqlite")}`;
  let dropDb: (() => Promise<void>) | null = null;
  if (kind === "postgres" && !options.databaseUrl) {
    const db = await createTestDatabase();
    databaseUrl = db.url;
    dropDb = db.drop;
  }
  const config = loadConfig(
    {},
    {
      port: 0,
      host: "127.0.0.1",
      dataDir: dir,
      databaseUrl,
      adminKey: ADMIN_KEY,
      logLevel: "info",
      ...overrides,
    },
  );
  const logs: string[] = [];
  const stream = new PassThrough();
  stream.on("data", (chunk: Buffer) => logs.push(...chunk.toString("utf8").split("\n").filter(Boolean)));
  const gateway = await buildGateway(config, { logStream: stream });
  const url = await gateway.listen(0);

  const admin = async (method: string, urlPath: string, body?: unknown) => {
    const res = await fetch(`${url}/api/admin${urlPath}`, {
      method,
      headers: {
        authorization: `Bearer ${ADMIN_KEY}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };

  let userCount = 0;
  return {
    gateway,
    url,
    adminKey: ADMIN_KEY,
    logs,
    admin,
    async createUser(opts = {}) {
      userCount += 1;
      const user = await admin("POST", "/users", {
        name: `user-${userCount}`,
        group: opts.group,
        quota: opts.quota ?? 10_000_000,
      });
      if (user.status !== 200) throw new Error(`create user: ${JSON.stringify(user.body)}`);
      const t = opts.token ?? {};
      const token = await admin("POST", `/users/${user.body.data.id}/tokens`, {
        name: "default",
        expires_at: t.expiresAt ?? undefined,
        quota_limit: t.quotaLimit ?? undefined,
        models: t.models ?? undefined,
        ip_allow: t.ipAllow ?? undefined,
      });
      if (token.status !== 200) throw new Error(`create token: ${JSON.stringify(token.body)}`);
      return { userId: user.body.data.id, tokenId: token.body.data.id, key: token.body.data.key };
    },
    async createChannel(input) {
      const res = await admin("POST", "/channels", {
        name: input.name ?? `${input.type}-${Math.random().toString(36).slice(2, 6)}`,
        type: input.type,
        base_url: input.baseUrl,
        key: input.key ?? "sim-key",
        models: input.models,
        model_mapping: input.modelMapping,
        groups: input.groups,
        priority: input.priority,
        weight: input.weight,
        price_ratio: input.priceRatio,
        settings: input.settings === undefined ? undefined : settingsToApi(input.settings),
      });
      if (res.status !== 200) throw new Error(`create channel: ${JSON.stringify(res.body)}`);
      return res.body.data.id as number;
    },
    async balance(userId: number) {
      const user = await gateway.ctx.users.get(userId);
      return Number(user?.quota);
    },
    dataDir: dir,
    async close() {
      await gateway.close();
      if (dropDb && !options.keepStore) await dropDb();
      // A SQLite store given by URL lives elsewhere: the folder goes unless the store lives in it.
      const storeInDir = !options.databaseUrl;
      if (ownDir && !(options.keepStore && storeInDir)) rmSync(dir, { recursive: true, force: true });
    },
    async dropStore() {
      if (dropDb) await dropDb();
      if (ownDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
