import type { Channel } from "../core/channel.js";
import { TASK_PLATFORMS } from "../core/tasks/families.js";
import { SNIFF_BYTES, sniffMediaType } from "../core/tasks/media-sniff.js";
import { type ResultCopierPort, ResultCopyError, type ResultFile } from "../core/tasks/result-files.js";
import { GuardedFetchError, type GuardedFetcher } from "../net/guarded-fetch.js";
import { type BlobStore, BlobTooLargeError } from "./blob-store.js";
import { BLOB_KEY } from "./blob-types.js";

/** Path, under a family, where stored task results are served. */
export const TASK_FILES_PATH = "files";

/** The gateway's URL of a stored task file. */
export function taskFileUrl(publicBaseUrl: string, family: string, key: string): string {
  return `${publicBaseUrl}/${family}/${TASK_FILES_PATH}/${key}`;
}

export interface ResultCopierOptions {
  blobs: BlobStore;
  /** Fetches URLs on the channel's own host (loopback and private addresses allowed: the operator chose it). */
  trusted: GuardedFetcher;
  /** Fetches every other URL (public addresses only). */
  guarded: GuardedFetcher;
  publicBaseUrl(): string;
  /** Largest file copied; a bigger one fails the copy for good (bytes). */
  maxBytes: number;
  /** Whole-copy limit of one file (ms). */
  timeoutMs: number;
}

const LASTING_FETCH_FAILURES = new Set(["blocked", "scheme", "redirects", "too_large"]);

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}

/** Reads until `bytes` are in (or the body ends); answers them and the rest of the body after them. */
async function peek(body: AsyncIterable<Buffer>, bytes: number) {
  const iterator = body[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let size = 0;
  let done = false;
  while (size < bytes) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    head.push(next.value);
    size += next.value.length;
  }
  const first = Buffer.concat(head);
  async function* whole() {
    yield first;
    if (done) return;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  }
  return { head: first, whole: whole() };
}

/**
 * Copies task result files into the blob store: streamed from the upstream through the SSRF
 * guard, the media type taken from the bytes, the size bounded while it streams.
 */
export class ResultCopier implements ResultCopierPort {
  private readonly ownFiles = new RegExp(`^/(${TASK_PLATFORMS.join("|")})/${TASK_FILES_PATH}/([^/?#]+)$`);

  constructor(private readonly options: ResultCopierOptions) {}

  isStored(url: string): boolean {
    const base = this.options.publicBaseUrl();
    if (!url.startsWith(`${base}/`)) return false;
    const key = this.ownFiles.exec(url.slice(base.length))?.[2];
    return key !== undefined && BLOB_KEY.test(key);
  }

  async copy(file: ResultFile, channel: Channel): Promise<string> {
    const { maxBytes, timeoutMs } = this.options;
    const own = sameOrigin(file.url, channel.baseUrl);
    const fetcher = own ? this.options.trusted : this.options.guarded;
    // The channel's key goes to the channel's own address only, and never along a redirect.
    const keyed = own && file.withKey === true;
    try {
      const res = await fetcher.stream(file.url, {
        method: "GET",
        maxBytes,
        timeoutMs,
        ...(keyed ? { headers: { authorization: `Bearer ${channel.key}` }, maxRedirects: 0 } : {}),
      });
      if (res.status < 200 || res.status >= 300) {
        res.body.resume();
        throw new ResultCopyError(false, `the ${file.field} answered HTTP ${res.status}`);
      }
      let mimeType: string | undefined;
      try {
        const { head, whole } = await peek(res.body, SNIFF_BYTES);
        mimeType = sniffMediaType(head, file.field);
        if (!mimeType) {
          res.body.resume();
          const declared = String(res.headers["content-type"] ?? "none");
          throw new ResultCopyError(true, `the ${file.field} is not a file of its kind (content type ${declared})`);
        }
        const key = await this.options.blobs.putStream(whole, mimeType, { maxBytes });
        return taskFileUrl(this.options.publicBaseUrl(), file.family, key);
      } catch (err) {
        if (err instanceof ResultCopyError || err instanceof BlobTooLargeError) throw err;
        throw res.explain(err);
      }
    } catch (err) {
      throw this.explain(file, err);
    }
  }

  private explain(file: ResultFile, err: unknown): ResultCopyError {
    if (err instanceof ResultCopyError) return err;
    if (err instanceof BlobTooLargeError) {
      return new ResultCopyError(true, `the ${file.field} is larger than the limit of ${err.maxBytes} bytes`);
    }
    if (err instanceof GuardedFetchError) {
      return new ResultCopyError(LASTING_FETCH_FAILURES.has(err.reason), `the ${file.field}: ${err.message}`);
    }
    return new ResultCopyError(false, `the ${file.field}: ${(err as Error).message}`, { cause: err });
  }
}
