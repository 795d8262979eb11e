/** What a usage series is split by. Tasks count under their platform as surface. */
export type SeriesBy = "surface" | "model" | "channel";

/** Most buckets one series may ask for. */
export const MAX_SERIES_BUCKETS = 500;

/**
 * The bucket count of a series from fromMs to toMs (Unix milliseconds, the end exclusive) in
 * buckets of bucketMs; RangeError when it is empty or above MAX_SERIES_BUCKETS.
 */
export function seriesBucketCount(q: { fromMs: number; toMs: number; bucketMs: number }): number {
  if (!Number.isInteger(q.bucketMs) || q.bucketMs < 1000 || q.bucketMs % 1000 !== 0) {
    throw new RangeError("the bucket width must be a whole number of seconds");
  }
  const count = Math.ceil((Math.floor(q.toMs / 1000) - Math.floor(q.fromMs / 1000)) / (q.bucketMs / 1000));
  if (!(count >= 1)) throw new RangeError("the range must end after it starts");
  if (count > MAX_SERIES_BUCKETS) throw new RangeError(`at most ${MAX_SERIES_BUCKETS} buckets`);
  return count;
}
