import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { TaskListQuery, WebhookListQuery } from "../../contracts/admin.js";
import { IdParams, limitOf, ok } from "../../contracts/common.js";
import { AdminTaskView, RequestLogView, TaskDetailView, WebhookDeliveryView } from "../../contracts/records.js";
import { notFound } from "../../core/admin/checks.js";
import { GatewayError } from "../../core/errors.js";
import type { TaskRow } from "../../store/task-reads.js";
import type { WebhookDelivery } from "../../store/webhook-deliveries.js";
import { answers, type OperatorLists } from "./admin-deps.js";
import { RequestLogQuery, TaskIdParams } from "./ops-schemas.js";

const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
const orNull = (v: number | string | null) => (v === null ? null : Number(v));

/** The filters every record list takes (its user, its task) and its page: 50 rows unless asked. */
function recordPage(q: { user_id?: string; task_id?: string; after?: string; limit?: string }) {
  return { userId: num(q.user_id), taskId: q.task_id, after: num(q.after), limit: limitOf(q.limit, 50, 1000) };
}

function taskView(r: TaskRow): Static<typeof AdminTaskView> {
  return {
    id: Number(r.id),
    task_id: r.task_id,
    platform: r.platform,
    user_id: Number(r.user_id),
    token_id: orNull(r.token_id),
    channel_id: Number(r.channel_id),
    upstream_id: r.upstream_id,
    upstream_status: r.upstream_status,
    action: r.action,
    status: r.status,
    quota: Number(r.quota),
    fail_reason: r.fail_reason,
    progress: r.progress,
    submit_time: Number(r.submit_time),
    finish_time: Number(r.finish_time),
    poll_count: Number(r.poll_count),
    next_poll_at: Number(r.next_poll_at),
  };
}

function json(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function deliveryView(r: WebhookDelivery): Static<typeof WebhookDeliveryView> {
  return {
    id: Number(r.id),
    webhook_id: r.webhook_id,
    user_id: Number(r.user_id),
    task_id: r.task_id,
    url: r.url,
    event: r.event,
    status: r.status as "pending" | "delivered" | "failed",
    attempts: Number(r.attempts),
    next_attempt_at: Number(r.next_attempt_at),
    last_status: orNull(r.last_status),
    last_error: r.last_error,
    created_at: Number(r.created_at),
    delivered_at: orNull(r.delivered_at),
  };
}

/** The records operators browse: tasks with their history, webhook deliveries, the request log. */
export async function recordAdminRoutes(base: FastifyInstance, opts: { lists: OperatorLists }) {
  const { lists } = opts;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    "/tasks",
    {
      schema: {
        summary: "List tasks with their routing",
        description: "Oldest first; `after` is the id of the last task of the previous page. Filters combine.",
        querystring: Type.Object(
          { ...TaskListQuery.properties, channel_id: Type.Optional(Type.String({ pattern: "^[0-9]{1,15}$" })) },
          { additionalProperties: false },
        ),
        response: answers(Type.Array(AdminTaskView)),
      },
    },
    async (request) => {
      const q = request.query;
      const rows = await lists.tasks({
        ...recordPage(q),
        status: q.status,
        platform: q.platform,
        channelId: num(q.channel_id),
      });
      return ok(rows.map(taskView));
    },
  );

  app.get(
    "/tasks/:task_id",
    {
      schema: {
        summary: "Show a task with its upstream history",
        description:
          "Every field of the task (its callback secret aside) and its history: creation, each status move, " +
          "channel switch and failed poll, recorded by the store as they happen.",
        params: TaskIdParams,
        response: answers(TaskDetailView),
      },
    },
    async (request) => {
      const r = await lists.task(request.params.task_id);
      if (!r) throw notFound("task", request.params.task_id);
      const history = await lists.taskHistory(Number(r.id));
      return ok({
        ...taskView(r),
        group: r.group,
        result_url: r.result_url,
        start_time: Number(r.start_time),
        properties: json(r.properties),
        data: json(r.data),
        request_body: json(r.request_body),
        callback_url: r.callback_url,
        poll_errors: Number(r.poll_errors),
        lease_owner: r.lease_owner,
        created_at: Number(r.created_at),
        updated_at: Number(r.updated_at),
        history: history as Static<typeof TaskDetailView>["history"],
      });
    },
  );

  app.get(
    "/webhooks",
    {
      schema: {
        summary: "List webhook deliveries",
        querystring: WebhookListQuery,
        response: answers(Type.Array(WebhookDeliveryView)),
      },
    },
    async (request) => {
      const q = request.query;
      const rows = await lists.webhookDeliveries({ ...recordPage(q), status: q.status });
      return ok(rows.map(deliveryView));
    },
  );

  app.post(
    "/webhooks/:id/retry",
    {
      schema: {
        summary: "Queue a webhook delivery again",
        description:
          "A failed (or still pending) delivery becomes pending and due now: the dispatcher makes one more " +
          "attempt at once, with the same webhook-id. Past the delivery's age limit a failed attempt marks it " +
          "failed again. A delivered one is refused (409).",
        params: IdParams,
        response: answers(WebhookDeliveryView),
      },
    },
    async (request) => {
      const id = Number(request.params.id);
      const row = await lists.requeueDelivery(id, Date.now());
      if (row) return ok(deliveryView(row));
      if (!(await lists.delivery(id))) throw notFound("webhook delivery", id);
      throw new GatewayError("GW_ERR_CONFLICT", `Webhook delivery ${id} was delivered; there is nothing to retry.`);
    },
  );

  app.get(
    "/request-logs",
    {
      schema: {
        summary: "Browse the request log",
        description:
          "Content and image calls, newest first; `after` is the id of the last row of the previous page. " +
          "Filters combine.",
        querystring: RequestLogQuery,
        response: answers(Type.Array(RequestLogView)),
      },
    },
    async (request) => {
      const q = request.query;
      const rows = await lists.requestLogs({
        ...recordPage(q),
        channelId: num(q.channel_id),
        model: q.model,
        status: num(q.status),
      });
      return ok(
        rows.map((r) => ({
          id: Number(r.id),
          created_at: Number(r.created_at),
          request_id: r.request_id,
          user_id: orNull(r.user_id),
          token_id: orNull(r.token_id),
          channel_id: orNull(r.channel_id),
          surface: r.surface,
          model: r.model,
          prompt_tokens: Number(r.prompt_tokens),
          completion_tokens: Number(r.completion_tokens),
          cached_tokens: Number(r.cached_tokens),
          quota: Number(r.quota),
          latency_ms: Number(r.latency_ms),
          status: Number(r.status),
          error: r.error,
        })),
      );
    },
  );
}
