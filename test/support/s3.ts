import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  ListObjectsV2Command,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import type { ConfigOverrides } from "../../src/config/load.js";

/**
 * A bucket for tests. By default an S3 server (s3rver, in-process JavaScript) is started on a
 * free loopback port with its files in a temporary folder, and a fresh bucket is made for the run;
 * both go at close(). With TEST_S3_URL=s3://<bucket> (and TEST_S3_ENDPOINT, TEST_S3_REGION,
 * TEST_S3_ACCESS_KEY_ID, TEST_S3_SECRET_ACCESS_KEY) the tests use that existing bucket instead,
 * under a prefix of their own that close() empties.
 */
export interface TestBucket {
  bucket: string;
  /** Unique to this bucket's run: everything the tests store is under it. */
  prefix: string;
  /** `s3://<bucket>/<prefix>`, the gateway's BLOB_URL. */
  blobUrl: string;
  endpoint: string | null;
  region: string;
  /** The credentials the gateway is given (a pair made for this run with s3rver). */
  accessKeyId: string;
  secretAccessKey: string;
  /** A client of the bucket with the same credentials. */
  client: S3Client;
  /** The gateway settings that point at this bucket. */
  settings(downloads?: "proxy" | "redirect"): Pick<ConfigOverrides, "blobs" | "s3">;
  /** Names of the objects under `<prefix>/<under>`. */
  list(under?: string): Promise<string[]>;
  close(): Promise<void>;
}

interface S3rverInstance {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
  httpServer?: Server;
}

const require = createRequire(import.meta.url);

function unique(): string {
  return `${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
}

async function startS3rver(): Promise<{
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  stop(): Promise<void>;
}> {
  const S3rver = require("s3rver") as new (options: object) => S3rverInstance;
  const account = require("s3rver/lib/models/account.js") as {
    DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void; revokeAccessKey(id: string): void };
  };
  // A key pair of this run only, so a test can look for the secret in what the gateway says.
  const accessKeyId = `MGTEST${randomBytes(6).toString("hex").toUpperCase()}`;
  const secretAccessKey = `secret-${randomBytes(18).toString("base64url")}`;
  account.DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);
  const directory = mkdtempSync(path.join(os.tmpdir(), "mg-s3-"));
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    accessKeyId,
    secretAccessKey,
    async stop() {
      // Kept-alive connections of the clients would hold close() open.
      server.httpServer?.closeAllConnections();
      await server.close();
      account.DUMMY_ACCOUNT.revokeAccessKey(accessKeyId);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** A bucket of its own for a test file (see `TestBucket`). */
export async function startTestBucket(): Promise<TestBucket> {
  const external = process.env.TEST_S3_URL;
  const local = external ? null : await startS3rver();
  const given = external ? /^s3:\/\/([^/]+)\/?(.*)$/.exec(external) : null;
  if (external && !given) throw new Error(`TEST_S3_URL must be s3://<bucket>[/<prefix>] (got "${external}")`);
  const bucket = given?.[1] ?? `mg-test-${unique()}`;
  const prefix = [given?.[2]?.replace(/\/+$/, ""), `run-${unique()}`].filter(Boolean).join("/");
  const endpoint = local?.endpoint ?? process.env.TEST_S3_ENDPOINT ?? null;
  const region = process.env.TEST_S3_REGION ?? "us-east-1";
  const accessKeyId = local?.accessKeyId ?? process.env.TEST_S3_ACCESS_KEY_ID ?? "";
  const secretAccessKey = local?.secretAccessKey ?? process.env.TEST_S3_SECRET_ACCESS_KEY ?? "";
  const forcePathStyle = endpoint !== null;
  const clientConfig: S3ClientConfig = {
    region,
    endpoint: endpoint ?? undefined,
    forcePathStyle,
    credentials: accessKeyId ? { accessKeyId, secretAccessKey } : undefined,
  };
  const client = new S3Client(clientConfig);
  if (local) await client.send(new CreateBucketCommand({ Bucket: bucket }));

  const list = async (under = "") => {
    const names: string[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/${under}`, ContinuationToken: token }),
      );
      names.push(...(page.Contents ?? []).map((o) => o.Key as string));
      token = page.NextContinuationToken;
    } while (token);
    return names;
  };

  return {
    bucket,
    prefix,
    blobUrl: `s3://${bucket}/${prefix}`,
    endpoint,
    region,
    accessKeyId,
    secretAccessKey,
    client,
    settings: (downloads = "proxy") => ({
      blobs: { url: `s3://${bucket}/${prefix}`, downloads },
      s3: {
        endpoint,
        region,
        accessKeyId: accessKeyId || null,
        secretAccessKey: secretAccessKey || null,
        forcePathStyle,
      },
    }),
    list,
    async close() {
      if (!local) {
        const names = await list();
        for (let i = 0; i < names.length; i += 1000) {
          const Objects = names.slice(i, i + 1000).map((Key) => ({ Key }));
          await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects } }));
        }
      }
      client.destroy();
      await local?.stop();
    },
  };
}
