import { HeadBucketCommand, S3Client } from "@aws-sdk/client-s3";
import type { Config } from "../config.js";

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
    // Checksums only where S3 requires them: many compatible services refuse the newer ones.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
}

/** Resolves when the bucket answers to these credentials; rejects with the service's error. */
export async function headBucket(client: S3Client, bucket: string, timeoutMs: number): Promise<void> {
  await client.send(new HeadBucketCommand({ Bucket: bucket }), { abortSignal: AbortSignal.timeout(timeoutMs) });
}
