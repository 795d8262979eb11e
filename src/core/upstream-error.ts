/**
 * How an upstream failure is classified (every adapter reports one of these):
 * - `retryable`: connection refused or reset, timeout before any byte, 408, 429, 5xx: another
 *   channel may be tried;
 * - `refused`: any other 4xx: the request is wrong or forbidden upstream; the user gets a clear
 *   error and is refunded;
 * - `auth`: 401/403 from the upstream or a bad-key 400: the channel itself is unhealthy.
 */
export type UpstreamErrorClass = "retryable" | "refused" | "auth";

export class UpstreamError extends Error {
  override readonly name = "UpstreamError";
  readonly kind: UpstreamErrorClass;
  /** HTTP status from the upstream, when there was an answer. */
  readonly status: number | null;
  /** True once any byte of the answer reached the client: no failover after that. */
  committed: boolean;
  /**
   * False when the failure says nothing about the channel: the gateway itself gave up before
   * calling it (every concurrency slot busy). Failover still moves on; channel health ignores it.
   */
  readonly channelAtFault: boolean;

  /** `message` must never hold a channel key or a URL carrying one. */
  constructor(
    kind: UpstreamErrorClass,
    message: string,
    options: { status?: number | null; cause?: unknown; channelAtFault?: boolean } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.status = options.status ?? null;
    this.committed = false;
    this.channelAtFault = options.channelAtFault ?? true;
  }
}

export function isUpstreamError(err: unknown): err is UpstreamError {
  return err instanceof UpstreamError;
}

/** The class of an upstream HTTP status. */
export function classifyStatus(status: number): UpstreamErrorClass {
  if (status === 401 || status === 403) return "auth";
  if (status === 408 || status === 429 || status >= 500) return "retryable";
  return "refused";
}

/**
 * An upstream failure's message as a client may see it: without the upstream's address (which
 * internal messages carry for the operator's logs).
 */
export function publicUpstreamReason(message: string): string {
  return message.replace(/\s*\(https?:\/\/[^)]*\)/g, "").slice(0, 500);
}
