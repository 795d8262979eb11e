import { GuardedFetchError } from "./guarded-fetch.js";

/**
 * Bytes of downloads one instance may hold in memory at once (input images of every request in
 * flight). Taken as the bytes arrive, given back when the request that holds them ends.
 */
export class ByteBudget {
  private used = 0;

  constructor(
    readonly limit: number,
    /** Told the bytes in use after every change (a metric). */
    private readonly onChange: (inUse: number) => void = () => {},
  ) {}

  get inUse(): number {
    return this.used;
  }

  /** Takes `bytes` when they fit; false (nothing taken) when they do not. */
  tryTake(bytes: number): boolean {
    if (this.used + bytes > this.limit) return false;
    this.used += bytes;
    this.onChange(this.used);
    return true;
  }

  release(bytes: number): void {
    if (bytes === 0) return;
    this.used = Math.max(0, this.used - bytes);
    this.onChange(this.used);
  }
}

/**
 * The downloads of one request: at most `perRequest` bytes in all, each byte also taken from the
 * instance's budget. `close` gives every byte back and aborts downloads still running (a request
 * that failed early leaves its other downloads behind).
 */
export class RequestDownloads {
  private taken = 0;
  private closed = false;
  /** Made when a download first asks for the signal: most requests fetch nothing. */
  private controller: AbortController | null = null;

  constructor(
    private readonly instance: ByteBudget,
    readonly perRequest: number,
  ) {}

  /** Aborts the request's downloads once it has ended. */
  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.closed && !this.controller.signal.aborted) this.controller.abort();
    return this.controller.signal;
  }

  /**
   * Accounts for `bytes` more of a download; throws a GuardedFetchError (`too_large` past the
   * request's own limit, `busy` when the instance holds all it may) to stop it.
   */
  take(bytes: number): void {
    if (this.closed) throw new GuardedFetchError("network", "the request has ended");
    if (this.taken + bytes > this.perRequest) {
      throw new GuardedFetchError(
        "too_large",
        `the input images of one request are larger than the limit of ${this.perRequest} bytes together`,
      );
    }
    if (!this.instance.tryTake(bytes)) {
      throw new GuardedFetchError("busy", "the gateway holds as many downloaded image bytes as it may at once");
    }
    this.taken += bytes;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    // No controller, no download to stop (aborting builds an error with its stack: not free).
    this.controller?.abort();
    this.instance.release(this.taken);
    this.taken = 0;
  }
}
