import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { GatewayError } from "../../core/errors.js";
import { MAX_SERIES_BUCKETS, type SeriesBy, seriesBucketCount } from "../../store/usage-series.js";
import type { OperatorLists } from "./admin-deps.js";
import { OverviewQuery, OverviewView } from "./ops-schemas.js";
import { Envelope, ok } from "./views.js";

/** The range an overview covers, from its query; a 400 naming the field when it cannot be drawn. */
function rangeOf(q: { minutes?: string; from?: string; to?: string; bucket_seconds?: string }, nowMs: number) {
  const bucketSeconds = q.bucket_seconds === undefined ? 60 : Number(q.bucket_seconds);
  if (bucketSeconds < 1) {
    throw new GatewayError("GW_ERR_VALIDATION", "bucket_seconds must be at least 1", { param: "bucket_seconds" });
  }
  const now = Math.floor(nowMs / 1000);
  let from: number;
  let to: number;
  if (q.from !== undefined) {
    from = Number(q.from);
    to = q.to === undefined ? now : Number(q.to);
    if (to <= from) throw new GatewayError("GW_ERR_VALIDATION", "to must be after from", { param: "to" });
  } else {
    if (q.to !== undefined) throw new GatewayError("GW_ERR_VALIDATION", "to needs from", { param: "from" });
    const minutes = q.minutes === undefined ? 60 : Number(q.minutes);
    if (minutes < 1) throw new GatewayError("GW_ERR_VALIDATION", "minutes must be at least 1", { param: "minutes" });
    // The last bucket ends after the current second, so what just happened is in it.
    to = (Math.floor(now / bucketSeconds) + 1) * bucketSeconds;
    from = to - Math.ceil((minutes * 60) / bucketSeconds) * bucketSeconds;
  }
  try {
    seriesBucketCount({ fromMs: from * 1000, toMs: to * 1000, bucketMs: bucketSeconds * 1000 });
  } catch {
    throw new GatewayError(
      "GW_ERR_VALIDATION",
      `the range holds more than ${MAX_SERIES_BUCKETS} buckets of ${bucketSeconds} s: widen bucket_seconds or shorten the range`,
      { param: "bucket_seconds" },
    );
  }
  return { from, to, bucketSeconds };
}

/** The operators' overview: traffic, errors and spend over time, tasks by state, open charges. */
export async function overviewAdminRoutes(base: FastifyInstance, opts: { lists: OperatorLists; now?: () => number }) {
  const { lists } = opts;
  const now = opts.now ?? Date.now;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    "/overview",
    {
      schema: {
        summary: "Requests, errors and spend over time",
        description:
          "Buckets over the last `minutes` (aligned to `bucket_seconds`, the last one holding now) or over " +
          "`from`..`to`, split `by` surface, model or channel. Requests and errors come from the request log " +
          "(content and image calls; an error is a status of 400 or more) and from tasks by submit time (an " +
          "error is a task that ended FAILURE); spend is the quota billed (a failed task's is refunded, so 0). " +
          `At most ${MAX_SERIES_BUCKETS} buckets.`,
        querystring: OverviewQuery,
        response: { 200: Envelope(OverviewView) },
      },
    },
    async (request) => {
      const { from, to, bucketSeconds } = rangeOf(request.query, now());
      const by: SeriesBy = request.query.by ?? "surface";
      const [buckets, tasksByState, openCharges] = await Promise.all([
        lists.series({ fromMs: from * 1000, toMs: to * 1000, bucketMs: bucketSeconds * 1000, by }),
        lists.tasksByState(),
        lists.openCharges(),
      ]);
      return ok({
        from,
        to,
        bucket_seconds: bucketSeconds,
        by,
        buckets,
        tasks_by_state: tasksByState,
        open_charges: openCharges,
      });
    },
  );
}
