import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { TASK_FAMILIES } from "../core/tasks/families.js";

/** What happened to one upstream call: it worked, or the class of its failure. */
export type UpstreamOutcome = "ok" | "retryable" | "refused" | "auth";

/** Number of tasks per family and state, as the store reports it at scrape time. */
export interface TaskStateCount {
  platform: string;
  status: string;
  count: number;
}

/** The task states every scrape reports, at zero when no task is in them. */
export const TASK_STATES = ["NOT_START", "SUBMITTED", "QUEUED", "IN_PROGRESS", "SUCCESS", "FAILURE"] as const;

/**
 * The metrics of one gateway. Each gateway has a registry of its own (never prom-client's global
 * one), so several gateways in one process never share or clash over a series.
 */
export interface GatewayMetrics {
  registry: Registry;
  /** Requests answered, by method, route pattern (not the raw URL) and status code. */
  httpRequests: Counter<"method" | "route" | "status_code">;
  httpDuration: Histogram<"method" | "route" | "status_code">;
  /** Calls to upstream channels, by channel id, protocol and outcome. */
  upstreamCalls: Counter<"channel" | "type" | "outcome">;
  /** Calls by channel id and pool key id (never the key), and outcome. */
  upstreamKeyCalls: Counter<"channel" | "key" | "outcome">;
  /** Seconds between the moment a task was due for a poll and the moment it was polled. */
  pollLag: Histogram<"platform">;
  /** Tasks asked about in one upstream poll call. */
  pollBatchSize: Histogram<"platform">;
  /** Quota moved by the ledger (counted once the movement is committed where the ledger can tell). */
  quotaCharged: Counter<string>;
  quotaRefunded: Counter<string>;
  /** Settlement differences: `returned` to the user, or `collected` when the real cost was higher. */
  quotaSettled: Counter<"direction">;
  quotaToppedUp: Counter<string>;
  /** Requests refused because a rate limit was reached, by surface. */
  rateLimited: Counter<"surface">;
  /** Bytes of downloaded input images held in memory by the requests in flight. */
  imageInputBytes: Gauge<string>;
}

export interface MetricsOptions {
  /** Reads the task counts at scrape time; the gauge stays empty when it fails. */
  countTasks?: () => Promise<TaskStateCount[]>;
  /** Reads how many charges are open, and how many of them are past their close-by time. */
  countOpenCharges?: () => Promise<{ open: number; overdue: number }>;
  /** Adds process metrics (CPU, memory, event loop lag, GC). On by default. */
  processMetrics?: boolean;
}

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** Creates a registry with every gateway metric registered on it. */
export function createGatewayMetrics(options: MetricsOptions = {}): GatewayMetrics {
  const registry = new Registry();
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry });
  const countTasks = options.countTasks;

  new Gauge({
    name: "gateway_tasks",
    help: "Tasks in the store by family and state (read from the store at scrape time).",
    labelNames: ["platform", "status"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      if (!countTasks) return;
      let rows: TaskStateCount[];
      try {
        rows = await countTasks();
      } catch {
        // A store that does not answer must not fail the whole scrape; /readyz reports it.
        return;
      }
      for (const platform of TASK_FAMILIES) for (const status of TASK_STATES) this.set({ platform, status }, 0);
      for (const r of rows) this.set({ platform: r.platform, status: r.status }, r.count);
    },
  });

  const countOpenCharges = options.countOpenCharges;
  new Gauge({
    name: "gateway_open_charges",
    help: "Charges not yet settled or refunded, by whether their close-by time has passed (read at scrape time).",
    labelNames: ["overdue"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      if (!countOpenCharges) return;
      try {
        const { open, overdue } = await countOpenCharges();
        this.set({ overdue: "false" }, open - overdue);
        this.set({ overdue: "true" }, overdue);
      } catch {
        // As for the task gauge: a store that does not answer leaves the gauge empty.
      }
    },
  });

  return {
    registry,
    httpRequests: new Counter({
      name: "gateway_http_requests_total",
      help: "HTTP requests answered, by method, route pattern and status code.",
      labelNames: ["method", "route", "status_code"] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: "gateway_http_request_duration_seconds",
      help: "Time from request to the end of the response, by method, route pattern and status code.",
      labelNames: ["method", "route", "status_code"] as const,
      buckets: SECONDS_BUCKETS,
      registers: [registry],
    }),
    upstreamCalls: new Counter({
      name: "gateway_upstream_calls_total",
      help: "Calls to upstream channels by channel id, protocol and outcome (ok, retryable, refused, auth).",
      labelNames: ["channel", "type", "outcome"] as const,
      registers: [registry],
    }),
    upstreamKeyCalls: new Counter({
      name: "gateway_upstream_key_calls_total",
      help: "Calls to upstream channels by channel id, key id in the channel's pool (never the key) and outcome.",
      labelNames: ["channel", "key", "outcome"] as const,
      registers: [registry],
    }),
    pollLag: new Histogram({
      name: "gateway_task_poll_lag_seconds",
      help: "How late a task was polled after it became due.",
      labelNames: ["platform"] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
    pollBatchSize: new Histogram({
      name: "gateway_task_poll_batch_size",
      help: "Tasks asked about in one upstream poll call.",
      labelNames: ["platform"] as const,
      buckets: [1, 2, 5, 10, 20, 50, 100, 200],
      registers: [registry],
    }),
    quotaCharged: new Counter({
      name: "gateway_quota_charged_total",
      help: "Quota charged to users.",
      registers: [registry],
    }),
    quotaRefunded: new Counter({
      name: "gateway_quota_refunded_total",
      help: "Quota refunded to users.",
      registers: [registry],
    }),
    quotaSettled: new Counter({
      name: "gateway_quota_settled_total",
      help: "Quota moved when a pre-charge was settled to its real cost: returned to users or collected from them.",
      labelNames: ["direction"] as const,
      registers: [registry],
    }),
    quotaToppedUp: new Counter({
      name: "gateway_quota_topped_up_total",
      help: "Quota added to users by operators.",
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: "gateway_rate_limited_requests_total",
      help: "Requests refused because a rate limit was reached, by surface.",
      labelNames: ["surface"] as const,
      registers: [registry],
    }),
    imageInputBytes: new Gauge({
      name: "gateway_image_input_bytes",
      help: "Bytes of downloaded input images held in memory by the image requests in flight.",
      registers: [registry],
    }),
  };
}
