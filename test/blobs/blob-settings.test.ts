import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfigWithFile } from "../../src/config/file.js";
import { type ConfigOverrides, loadConfig } from "../../src/config/load.js";
import { startTestGateway } from "../support/gateway.js";
import { refusedPort } from "../support/refused-port.js";
import { startTestBucket, type TestBucket } from "../support/s3.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "mg-blob-settings-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function failure(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("expected an error");
}

/** The message a gateway's start fails with (its data folder is removed either way). */
async function startFailure(overrides: ConfigOverrides): Promise<{ name: string; message: string }> {
  const dataDir = mkdtempSync(path.join(dir, "gw-"));
  try {
    const gw = await startTestGateway("sqlite", { logLevel: "silent", ...overrides }, { dataDir });
    await gw.close();
  } catch (err) {
    return { name: (err as Error).name, message: (err as Error).message };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  throw new Error("the gateway started");
}

describe("blob settings", () => {
  it("reads a folder or a bucket from BLOB_URL, and a folder under DATA_DIR by default", () => {
    expect(loadConfig({}).blobs).toEqual({ url: null, downloads: "proxy" });
    const s3 = loadConfig({ BLOB_URL: "s3://media-bucket/prod/eu", BLOB_DOWNLOADS: "redirect" });
    expect(s3.blobs).toEqual({ url: "s3://media-bucket/prod/eu", downloads: "redirect" });
    expect(loadConfig({ S3_ENDPOINT: "http://127.0.0.1:9000" }).s3.forcePathStyle).toBe(true);
    expect(loadConfig({}).s3).toMatchObject({ endpoint: null, region: "us-east-1", forcePathStyle: false });
    expect(loadConfig({ S3_ENDPOINT: "http://minio:9000", S3_FORCE_PATH_STYLE: "false" }).s3.forcePathStyle).toBe(
      false,
    );
  });

  it("refuses a BLOB_URL it cannot use, naming the setting and the value", () => {
    const cases: [string, RegExp][] = [
      ["ftp://host/blobs", /must be file:\/\/<folder> or s3:\/\/<bucket>/],
      ["file://", /name a folder/],
      ["s3://", /bucket name/],
      ["s3://Upper_Case", /bucket name/],
      ["s3://media-bucket/a//b", /prefix/],
      ["/var/blobs", /"blobs.url" \(BLOB_URL\)/],
    ];
    for (const [url, why] of cases) {
      const message = failure(() => loadConfig({ BLOB_URL: url }));
      expect(message, url).toContain('invalid setting "blobs.url" (BLOB_URL)');
      expect(message, url).toMatch(why);
    }
    expect(failure(() => loadConfig({ BLOB_DOWNLOADS: "inline" }))).toContain("must be one of proxy, redirect");
  });

  it("wants the bucket's key id and secret together, and never shows a secret", () => {
    const secret = "s3-secret-value-that-must-not-show";
    const message = failure(() => loadConfig({ BLOB_URL: "s3://media-bucket", S3_SECRET_ACCESS_KEY: secret }));
    expect(message).toContain("invalid setting S3_ACCESS_KEY_ID");
    expect(message).not.toContain(secret);
    const empty = failure(() => loadConfig({}, { s3: { secretAccessKey: "" } as never }));
    expect(empty).toContain('"s3.secretAccessKey" (S3_SECRET_ACCESS_KEY)');
  });

  it("refuses the bucket's secrets in a config file, and takes the rest from it", () => {
    const file = path.join(dir, "secret.yaml");
    writeFileSync(file, "s3:\n  secretAccessKey: in-the-file\n");
    const message = failure(() => loadConfigWithFile(file, {}));
    expect(message).toContain('"s3.secretAccessKey": secrets are read from the environment only');
    expect(message).toContain("S3_SECRET_ACCESS_KEY");
    expect(message).not.toContain("in-the-file");

    const good = path.join(dir, "good.yaml");
    writeFileSync(
      good,
      "blobs:\n  url: s3://media-bucket/prod\n  downloads: redirect\ns3:\n  endpoint: http://minio:9000\n",
    );
    const config = loadConfigWithFile(good, { S3_ACCESS_KEY_ID: "id", S3_SECRET_ACCESS_KEY: "secret" });
    expect(config.blobs).toEqual({ url: "s3://media-bucket/prod", downloads: "redirect" });
    // An endpoint named in the file means path-style addressing, as it does from the environment.
    expect(config.s3).toMatchObject({ endpoint: "http://minio:9000", forcePathStyle: true, accessKeyId: "id" });
  });
});

describe("the start-up check of the bucket", () => {
  let bucket: TestBucket;
  beforeAll(async () => {
    bucket = await startTestBucket();
  });
  afterAll(async () => {
    await bucket?.close();
  });

  it("stops the start when the bucket does not exist, naming BLOB_URL", async () => {
    const settings = bucket.settings();
    const missing = `mg-missing-${Date.now().toString(36)}`;
    const failed = await startFailure({ ...settings, blobs: { url: `s3://${missing}/x`, downloads: "proxy" } });
    expect(failed.name).toBe("StartupError");
    expect(failed.message).toMatch(new RegExp(`^BLOB_URL: bucket "${missing}" does not exist at `));
  });

  it("stops the start when the credentials are refused, without showing them", async () => {
    const secret = "wrong-secret-0123456789abcdef";
    const failed = await startFailure({
      ...bucket.settings(),
      s3: { ...bucket.settings().s3, accessKeyId: "MGWRONGKEY0000", secretAccessKey: secret },
    });
    expect(failed.message).toMatch(/^S3_ACCESS_KEY_ID: .* refused access to bucket/);
    expect(failed.message).not.toContain(secret);
  });

  it("stops the start when the service cannot be reached, naming S3_ENDPOINT", async () => {
    const port = await refusedPort();
    const failed = await startFailure({
      ...bucket.settings(),
      s3: { ...bucket.settings().s3, endpoint: `http://127.0.0.1:${port}` },
    });
    expect(failed.message).toMatch(/^S3_ENDPOINT: the S3 service at 127\.0\.0\.1:\d+ could not be reached/);
  });

  it("stops the start when the service does not answer within S3_CHECK_TIMEOUT_MS, saying so", async () => {
    // A service that takes the connection and never answers.
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => {
      sockets.add(socket);
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as net.AddressInfo;
    try {
      const failed = await startFailure({
        ...bucket.settings(),
        s3: { ...bucket.settings().s3, endpoint: `http://127.0.0.1:${port}`, checkTimeoutMs: 300 },
      });
      expect(failed.message).toMatch(
        /^S3_ENDPOINT: the S3 service at 127\.0\.0\.1:\d+ could not be reached for bucket ".*" \(no answer in time, see S3_CHECK_TIMEOUT_MS\)/,
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("refuses redirects without a bucket to redirect to", async () => {
    const failed = await startFailure({ blobs: { url: null, downloads: "redirect" } });
    expect(failed.name).toBe("ConfigError");
    expect(failed.message).toContain('"blobs.downloads" (BLOB_DOWNLOADS): redirect needs an s3:// BLOB_URL');
  });

  it("starts on a bucket that answers", async () => {
    const gw = await startTestGateway("sqlite", { logLevel: "silent", ...bucket.settings() });
    try {
      const ready = await fetch(`${gw.url}/readyz`);
      expect(ready.status).toBe(200);
    } finally {
      await gw.close();
    }
  });
});
