import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { Envelope, limitOf, ok } from "../../contracts/common.js";
import { OverviewView, UsageView } from "../../contracts/records.js";
import { GatewayError } from "../../core/errors.js";
import { MAX_SERIES_BUCKETS, type SeriesBy, seriesBucketCount } from "../../core/usage-series.js";
import type { UsageBy } from "../../store/usage-totals.js";
import type { OperatorLists } from "./admin-deps.js";
import { OverviewQuery, UsageQuery } from "./ops-schemas.js";

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

const DAY = 86_400;
/** Most days one usage query may count. */
const MAX_USAGE_DAYS = 366;

/** The whole UTC days a usage query counts; a 400 naming the field when they cannot be. */
function daysOf(q: { from?: string; to?: string }, nowMs: number) {
  const to = q.to === undefined ? Math.floor(nowMs / 1000) : Number(q.to);
  const toDay = to - (to % DAY) + DAY;
  const from = q.from === undefined ? toDay - 30 * DAY : Number(q.from);
  const fromDay = from - (from % DAY);
  if (fromDay >= toDay) throw new GatewayError("GW_ERR_VALIDATION", "to must not be before from", { param: "to" });
  if (toDay - fromDay > MAX_USAGE_DAYS * DAY) {
    throw new GatewayError("GW_ERR_VALIDATION", `at most ${MAX_USAGE_DAYS} days from from to to`, { param: "from" });
  }
  return { fromDay, toDay };
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
          "Buckets of whole hours starting on an hour read the request log's hourly totals, which outlive its " +
          "retention; finer ones read its rows. " +
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

  app.get(
    "/usage",
    {
      schema: {
        summary: "Usage per day, user, model, channel or surface",
        description:
          "The request log's totals (content, chat and image calls) over whole UTC days, from the usage totals " +
          "kept with every request: requests, errors (a status of 400 or more), spend (quota billed) and tokens. " +
          "They outlive the request log's retention. Filters combine. Tasks are not counted here (see /overview). " +
          `At most ${MAX_USAGE_DAYS} days.`,
        querystring: UsageQuery,
        response: { 200: Envelope(UsageView) },
      },
    },
    async (request) => {
      const q = request.query;
      const { fromDay, toDay } = daysOf(q, now());
      const by = (q.by ?? "day") as UsageBy;
      const rows = await lists.usage({
        fromDay,
        toDay,
        userId: q.user_id === undefined ? undefined : Number(q.user_id),
        model: q.model,
        channelId: q.channel_id === undefined ? undefined : Number(q.channel_id),
        surface: q.surface,
        by,
        limit: limitOf(q.limit, 100, 1000),
      });
      return ok({ from: fromDay, to: toDay, by, rows });
    },
  );
}
