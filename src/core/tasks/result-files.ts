import type { Channel } from "../channel.js";
import type { Clip } from "./clips.js";
import { type PollClock, type PolledRecord, pollOutcome, type Transition } from "./poll-outcome.js";

/** The clip fields holding result files the gateway hands out as its own stored copies. */
export const RESULT_FIELDS = ["audio_url", "video_url", "image_url", "spritesheet_url"] as const;
export type ResultField = (typeof RESULT_FIELDS)[number];

/** One result file an upstream handed out for a task. */
export interface ResultFile {
  /** The task's family (the stored copy is served under it). */
  family: string;
  field: ResultField;
  url: string;
  /** The file sits behind the channel's key at the channel's own address (see TaskUpstream.resultsNeedKey). */
  withKey?: boolean;
}

/**
 * A copy that did not succeed. `lasting`: trying again cannot help (the file is over the size
 * bound, is not a media file of its field's kind, or sits at an address the gateway may not fetch).
 */
export class ResultCopyError extends Error {
  override readonly name = "ResultCopyError";
  constructor(
    readonly lasting: boolean,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
  }
}

/** Copies task results into the gateway's storage. */
export interface ResultCopierPort {
  /** True when the URL already is one of the gateway's stored files (nothing to copy). */
  isStored(url: string): boolean;
  /**
   * Copies one file from where the channel's upstream put it; answers the gateway's URL of the
   * copy. Failures are ResultCopyErrors.
   */
  copy(file: ResultFile, channel: Channel): Promise<string>;
  /** Removes a copy made for a task that did not take it (a lost race, a half-finished set). */
  discard?(url: string): Promise<void>;
}

/** What a copy round did; `copies` are the gateway's URLs it made (to discard if unused). */
export type StoredResults =
  | { kind: "stored"; clips: Clip[]; copied: number; copies: string[] }
  | { kind: "failed"; lasting: boolean; reason: string; copies: string[] };

/**
 * Replaces every result file URL of the clips by the gateway's stored copy of it. A URL met
 * twice is copied once; a URL that already is the gateway's is kept; empty fields stay empty.
 * The first failure stops the copying: nothing is handed out half stored (the copies made so far
 * are in `copies`, for the caller to discard).
 */
export async function storeResultFiles(
  clips: Clip[],
  family: string,
  channel: Channel,
  copier: ResultCopierPort,
  options: { withKey?: boolean } = {},
): Promise<StoredResults> {
  const copies = new Map<string, string>();
  const stored: Clip[] = [];
  for (const clip of clips) {
    const next: Record<string, unknown> = { ...clip };
    for (const field of RESULT_FIELDS) {
      const url = next[field];
      if (typeof url !== "string" || url === "" || copier.isStored(url)) continue;
      let copy = copies.get(url);
      if (copy === undefined) {
        try {
          copy = await copier.copy({ family, field, url, withKey: options.withKey }, channel);
        } catch (err) {
          const lasting = err instanceof ResultCopyError && err.lasting;
          return { kind: "failed", lasting, reason: (err as Error).message, copies: [...copies.values()] };
        }
        copies.set(url, copy);
      }
      next[field] = copy;
    }
    stored.push(next as unknown as Clip);
  }
  return { kind: "stored", clips: stored, copied: copies.size, copies: [...copies.values()] };
}

/**
 * What a failed copy means for a task the upstream finished: a lasting failure ends it as FAILURE
 * (refunded) at once; any other failure is retried like a failed poll, with the same back-off,
 * until the task's deadline, where it fails (refunded) naming why.
 */
export function afterFailedCopy(
  record: PolledRecord,
  failure: { lasting: boolean; reason: string },
  clock: PollClock,
): Transition {
  const reason = `the result files could not be stored: ${failure.reason}`;
  if (failure.lasting) return { kind: "fail", reason, timedOut: false };
  const retry = pollOutcome(record, { kind: "error", reason }, clock);
  if (retry.kind === "fail") {
    return { ...retry, reason: `${reason} (still failing after ${clock.timeoutSeconds} seconds)` };
  }
  return retry;
}
