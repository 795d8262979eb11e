import { StartupError } from "../lifecycle/startup-errors.js";

type SdkFailure = Error & { code?: string; $metadata?: { httpStatusCode?: number }; cause?: unknown };

/** The error and its causes, outermost first. */
function chain(err: unknown): SdkFailure[] {
  const out: SdkFailure[] = [];
  let current: unknown = err;
  while (current instanceof Error && out.length < 10) {
    out.push(current as SdkFailure);
    current = (current as SdkFailure).cause;
  }
  return out;
}

const UNREACHABLE =
  /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ECONNRESET|TimeoutError|AbortError/;

/** `host:port` of the endpoint (never anything else of its URL), or AWS in the region's words. */
function serviceAt(endpoint: string | null): string {
  if (endpoint === null) return "AWS S3";
  try {
    const url = new URL(endpoint);
    return `the S3 service at ${url.host}`;
  } catch {
    return "the S3 service at (an unreadable URL)";
  }
}

/**
 * The start-up check of the bucket failed: a bucket that does not exist, credentials refused or
 * missing, or a service that cannot be reached. Names the setting to fix; never a secret.
 */
export function explainBucketFailure(err: unknown, bucket: string, endpoint: string | null): StartupError {
  const options = { cause: err };
  const where = serviceAt(endpoint);
  const failures = chain(err);
  const status = failures.map((e) => e.$metadata?.httpStatusCode).find((s) => s !== undefined);
  const names = failures.map((e) => `${e.name} ${e.code ?? ""}`).join(" ");
  if (status === 404 || /NoSuchBucket|NotFound/.test(names)) {
    return new StartupError(
      "BLOB_URL",
      `bucket "${bucket}" does not exist at ${where}`,
      "create it, or name an existing bucket in BLOB_URL (s3://<bucket>/<prefix>)",
      options,
    );
  }
  if (status === 301 || /PermanentRedirect/.test(names)) {
    return new StartupError(
      "S3_REGION",
      `bucket "${bucket}" at ${where} lives in another region than the one the gateway asked`,
      "set S3_REGION to the bucket's region",
      options,
    );
  }
  if (/CredentialsProviderError/.test(names)) {
    return new StartupError(
      "S3_ACCESS_KEY_ID",
      `no credentials were found for bucket "${bucket}" at ${where}`,
      "set S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (or the AWS SDK's own AWS_* variables or role)",
      options,
    );
  }
  if (status === 401 || status === 403) {
    return new StartupError(
      "S3_ACCESS_KEY_ID",
      `${where} refused access to bucket "${bucket}" (HTTP ${status})`,
      "check S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, and that the key may read and write the bucket",
      options,
    );
  }
  if (status === undefined && UNREACHABLE.test(names)) {
    // A timeout's DOMException carries a numeric code (23): say what happened instead.
    const timedOut = failures.some((e) => e.name === "TimeoutError" || e.name === "AbortError");
    const reason = timedOut
      ? "no answer in time, see S3_CHECK_TIMEOUT_MS"
      : (failures.find((e) => typeof e.code === "string")?.code ?? failures[0]?.name ?? "no answer");
    return new StartupError(
      endpoint === null ? "S3_REGION" : "S3_ENDPOINT",
      `${where} could not be reached for bucket "${bucket}" (${reason})`,
      endpoint === null ? "check the network and S3_REGION" : "start the service or correct S3_ENDPOINT",
      options,
    );
  }
  return new StartupError(
    "BLOB_URL",
    `the check of bucket "${bucket}" at ${where} failed (${status ? `HTTP ${status}` : (failures[0]?.name ?? "unknown error")})`,
    "check BLOB_URL and the S3_* settings",
    options,
  );
}
