import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { type TProperties, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { OperatorLists } from "./admin-deps.js";
import type { AdminStores } from "./admin-stores.js";
import * as ops from "./catalog-operations.js";
import { AdminTaskView, WebhookDeliveryView } from "./record-views.js";
import {
  CreateChannelBody,
  GroupParams,
  IdParams,
  limitOf,
  PriceParams,
  SetGroupRatioBody,
  SetPriceBody,
  TaskListQuery,
  UpdateChannelBody,
  UpdatePriceBody,
  WebhookListQuery,
} from "./schemas.js";
import { ChannelView, Envelope, GroupRatioView, ok, PriceView } from "./views.js";

const Deleted = (identity: TProperties) =>
  Type.Object({ ...identity, deleted: Type.Literal(true) }, { additionalProperties: false });
const answers = <T extends Parameters<typeof Envelope>[0]>(data: T) => ({ 200: Envelope(data) });

/** Channels (never with their key), prices, group ratios, and the task and webhook views. */
export async function channelAdminRoutes(base: FastifyInstance, opts: { lists: OperatorLists; stores: AdminStores }) {
  const { lists, stores: s } = opts;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const id = (params: { id: string }) => Number(params.id);

  app.get("/channels", { schema: { summary: "List channels", response: answers(Type.Array(ChannelView)) } }, async () =>
    ok(await ops.listChannels(s)),
  );

  app.post(
    "/channels",
    { schema: { summary: "Create a channel", body: CreateChannelBody, response: answers(ChannelView) } },
    async (request) => ok(await ops.createChannel(s, request.body)),
  );

  app.get(
    "/channels/:id",
    { schema: { summary: "Show a channel", params: IdParams, response: answers(ChannelView) } },
    async (request) => ok(await ops.showChannel(s, id(request.params))),
  );

  app.patch(
    "/channels/:id",
    {
      schema: {
        summary: "Change a channel",
        description:
          "Takes any fields of the channel as GET shows them, and `key`; read-only ones are ignored. " +
          "`status: enabled` also resets the failure count.",
        params: IdParams,
        body: UpdateChannelBody,
        response: answers(ChannelView),
      },
    },
    async (request) => ok(await ops.updateChannel(s, id(request.params), request.body)),
  );

  app.delete(
    "/channels/:id",
    {
      schema: {
        summary: "Delete a channel",
        description: "Refused (409) while an unfinished task is bound to the channel.",
        params: IdParams,
        response: answers(Deleted({ id: Type.Integer() })),
      },
    },
    async (request) => ok(await ops.deleteChannel(s, id(request.params))),
  );

  app.get("/prices", { schema: { summary: "List prices", response: answers(Type.Array(PriceView)) } }, async () =>
    ok(await ops.listPrices(s)),
  );

  app.put(
    "/prices",
    {
      schema: {
        summary: "Set a price",
        description: "Creates or replaces a price; fields not sent take their defaults.",
        body: SetPriceBody,
        response: answers(PriceView),
      },
    },
    async (request) => ok(await ops.setPrice(s, request.body)),
  );

  app.get(
    "/prices/:kind/:name",
    { schema: { summary: "Show a price", params: PriceParams, response: answers(PriceView) } },
    async (request) => ok(await ops.showPrice(s, request.params.kind, request.params.name)),
  );

  app.patch(
    "/prices/:kind/:name",
    {
      schema: {
        summary: "Change a price",
        description: "Takes any fields of the price as GET shows them; fields not sent keep their value.",
        params: PriceParams,
        body: UpdatePriceBody,
        response: answers(PriceView),
      },
    },
    async (request) => ok(await ops.updatePrice(s, request.params.kind, request.params.name, request.body)),
  );

  app.delete(
    "/prices/:kind/:name",
    {
      schema: {
        summary: "Delete a price",
        description: "Requests that need the price are refused until one is set again.",
        params: PriceParams,
        response: answers(Deleted({ kind: Type.String(), name: Type.String() })),
      },
    },
    async (request) => ok(await ops.deletePrice(s, request.params.kind, request.params.name)),
  );

  app.get(
    "/group-ratios",
    { schema: { summary: "List group ratios", response: answers(Type.Array(GroupRatioView)) } },
    async () => ok(await s.prices.listGroupRatios()),
  );

  app.put(
    "/group-ratios/:group",
    {
      schema: {
        summary: "Set a group's ratio",
        params: GroupParams,
        body: SetGroupRatioBody,
        response: answers(GroupRatioView),
      },
    },
    async (request) => ok(await ops.setGroupRatio(s, request.params.group, request.body)),
  );

  app.get(
    "/tasks",
    {
      schema: {
        summary: "List tasks with their routing",
        querystring: TaskListQuery,
        response: answers(Type.Array(AdminTaskView)),
      },
    },
    async (request) => {
      const q = request.query;
      const rows = await lists.tasks({
        userId: q.user_id === undefined ? undefined : Number(q.user_id),
        status: q.status,
        platform: q.platform,
        taskId: q.task_id,
        after: q.after === undefined ? undefined : Number(q.after),
        limit: limitOf(q.limit, 50, 1000),
      });
      return ok(
        rows.map((r) => ({
          id: Number(r.id),
          task_id: r.task_id,
          platform: r.platform,
          user_id: Number(r.user_id),
          token_id: r.token_id === null ? null : Number(r.token_id),
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
        })),
      );
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
      const rows = await lists.webhookDeliveries({
        userId: q.user_id === undefined ? undefined : Number(q.user_id),
        taskId: q.task_id,
        status: q.status,
        after: q.after === undefined ? undefined : Number(q.after),
        limit: limitOf(q.limit, 50, 1000),
      });
      return ok(
        rows.map((r) => ({
          id: Number(r.id),
          webhook_id: r.webhook_id,
          user_id: Number(r.user_id),
          task_id: r.task_id,
          url: r.url,
          event: r.event,
          status: r.status as "pending" | "delivered" | "failed",
          attempts: Number(r.attempts),
          next_attempt_at: Number(r.next_attempt_at),
          last_status: r.last_status === null ? null : Number(r.last_status),
          last_error: r.last_error,
          created_at: Number(r.created_at),
          delivered_at: r.delivered_at === null ? null : Number(r.delivered_at),
        })),
      );
    },
  );
}
