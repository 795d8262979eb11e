/**
 * The run's shared bucket: s3rver started as a child process of its own on a free loopback port
 * (not inside the run's process, whose event loop is busy with the load it sends), with one bucket
 * made at its start, and HeadBucket answered without a listing (see s3-server.mjs). The gateways
 * store every file there, as instances behind one address do.
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { type Child, freePort, ROOT, waitReady } from "./processes.js";

/** s3rver's own key pair: the run's bucket lives on loopback for the run's length only. */
const ACCESS_KEY = "S3RVER";

export interface RunBucket {
  bucket: string;
  /** s3rver's folder: every object is a file below it (read directly, past s3rver's own listing). */
  directory: string;
  client: S3Client;
  /** The gateways' settings that point at the bucket. */
  env: Record<string, string>;
  /** Every object's key under the run's prefix. */
  list(): Promise<string[]>;
}

export async function startRunBucket(track: (child: Child) => void, tempDirs: string[]): Promise<RunBucket> {
  const directory = mkdtempSync(path.join(os.tmpdir(), "mg-rel-s3-"));
  tempDirs.push(directory);
  const bucket = "mg-reliability";
  const prefix = "run";
  const port = await freePort();
  const server = path.join(ROOT, "scripts", "reliability", "s3-server.mjs");
  const proc = spawn(process.execPath, [server, directory, String(port), bucket], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const collect = (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) if (line.trim() !== "") lines.push(line);
  };
  proc.stdout?.on("data", collect);
  proc.stderr?.on("data", collect);
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  const endpoint = `http://127.0.0.1:${port}`;
  const child: Child = { name: "s3", port, url: endpoint, proc, lines, exited };
  track(child);
  const region = "us-east-1";
  const client = new S3Client({
    region,
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: ACCESS_KEY },
  });
  const list = async () => {
    const names: string[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/`, ContinuationToken: token }),
      );
      names.push(...(page.Contents ?? []).map((o) => o.Key as string));
      token = page.NextContinuationToken;
    } while (token);
    return names;
  };
  await waitReady(child, async () => {
    await list();
    return true;
  });
  return {
    bucket,
    directory,
    client,
    list,
    env: {
      BLOB_URL: `s3://${bucket}/${prefix}`,
      S3_ENDPOINT: endpoint,
      S3_FORCE_PATH_STYLE: "true",
      S3_REGION: region,
      S3_ACCESS_KEY_ID: ACCESS_KEY,
      S3_SECRET_ACCESS_KEY: ACCESS_KEY,
      // s3rver is one JavaScript process serving three instances on a 2-core machine that others
      // may share: a restarted instance's check of the bucket may wait behind their writes.
      S3_CHECK_TIMEOUT_MS: "60000",
    },
  };
}
