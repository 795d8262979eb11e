import { HeadBucketCommand, S3Client } from "@aws-sdk/client-s3";
import type { Config } from "../config/load.js";

const CONNECT_TIMEOUT_MS = 10_000;
const IDLE_TIMEOUT_MS = 120_000;
const MAX_CONNECTIONS = 1024;

/** A client of the S3-compatible service the settings name. */
export function createS3Client(s3: Config["s3"]): S3Client {
  return new S3Client({
    region: s3.region,
    endpoint: s3.endpoint ?? undefined,
    forcePathStyle: s3.forcePathStyle,
    credentials:
      s3.accessKeyId && s3.secretAccessKey
        ? { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }
        : undefined,
    requestHandler: {
      connectionTimeout: CONNECT_TIMEOUT_MS,
      // A bucket connection idle this long is given up (a stalled upload, a download whose client
      // stopped reading); the copy is retried, the player asks again with a Range.
      socketTimeout: IDLE_TIMEOUT_MS,
      // Each proxied download holds a connection while it streams: the SDK's 50 would queue the
      // 51st concurrent download.
      httpAgent: { keepAlive: true, maxSockets: MAX_CONNECTIONS },
      httpsAgent: { keepAlive: true, maxSockets: MAX_CONNECTIONS },
    },
    // Checksums only where S3 requires them: many compatible services refuse the newer ones.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
}

/** Resolves when the bucket answers to these credentials; rejects with the service's error. */
export async function headBucket(client: S3Client, bucket: string, timeoutMs: number): Promise<void> {
  await client.send(new HeadBucketCommand({ Bucket: bucket }), { abortSignal: AbortSignal.timeout(timeoutMs) });
}
