import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import type { GatewayContext } from "../../context.js";
import { GatewayError } from "../../errors.js";
import { type ChannelInput, publicChannel } from "../../store/channels.js";
import {
  CreateChannelBody,
  GroupParams,
  IdParams,
  limitOf,
  SetGroupRatioBody,
  SetPriceBody,
  TaskListQuery,
  UpdateChannelBody,
  WebhookListQuery,
} from "./schemas.js";
import { ok } from "./views.js";

type ChannelBody = Partial<{
  name: string;
  type: ChannelInput["type"];
  base_url: string;
  key: string;
  models: string[];
  model_mapping: Record<string, string>;
  groups: string[];
  priority: number;
  weight: number;
  price_ratio: number;
  status: "enabled" | "disabled";
  settings: ChannelInput["settings"];
}>;

function channelInput(b: ChannelBody): Partial<ChannelInput> {
  return {
    name: b.name,
    type: b.type,
    baseUrl: b.base_url,
    key: b.key,
    models: b.models,
    modelMapping: b.model_mapping,
    groups: b.groups,
    priority: b.priority,
    weight: b.weight,
    priceRatio: b.price_ratio,
    status: b.status,
    settings: b.settings,
  };
}

/** Channels (never with their key), prices, group ratios and the task list. */
export async function channelAdminRoutes(base: FastifyInstance, opts: { ctx: GatewayContext }) {
  const { ctx } = opts;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get("/channels", async () => ok((await ctx.channels.list()).map(publicChannel)));

  app.post("/channels", { schema: { body: CreateChannelBody } }, async (request) => {
    const channel = await ctx.channels.create(channelInput(request.body) as ChannelInput);
    await ctx.announce("channels");
    return ok(publicChannel(channel));
  });

  app.get("/channels/:id", { schema: { params: IdParams } }, async (request) => {
    const channel = await ctx.channels.get(Number(request.params.id));
    if (!channel) throw new GatewayError("GW_ERR_NOT_FOUND", `No channel ${request.params.id}.`);
    return ok(publicChannel(channel));
  });

  app.patch("/channels/:id", { schema: { params: IdParams, body: UpdateChannelBody } }, async (request) => {
    const patch = channelInput(request.body);
    const channel = await ctx.channels.update(Number(request.params.id), {
      ...patch,
      statusReason: patch.status === "disabled" ? "disabled by operator" : undefined,
    });
    if (!channel) throw new GatewayError("GW_ERR_NOT_FOUND", `No channel ${request.params.id}.`);
    await ctx.announce("channels");
    return ok(publicChannel(channel));
  });

  app.get("/prices", async () => {
    const rows = await ctx.prices.listPrices();
    return ok(
      rows.map((r) => ({
        kind: r.kind,
        name: r.name,
        price: Number(r.price),
        input_per_million: Number(r.input_per_million),
        output_per_million: Number(r.output_per_million),
        cached_ratio: Number(r.cached_ratio),
      })),
    );
  });

  app.put("/prices", { schema: { body: SetPriceBody } }, async (request) => {
    const b = request.body;
    await ctx.prices.setPrice({
      kind: b.kind,
      name: b.name,
      price: b.price,
      inputPerMillion: b.input_per_million,
      outputPerMillion: b.output_per_million,
      cachedRatio: b.cached_ratio,
    });
    await ctx.announce("prices");
    return ok(b);
  });

  app.get("/group-ratios", async () => ok(await ctx.prices.listGroupRatios()));

  app.put("/group-ratios/:group", { schema: { params: GroupParams, body: SetGroupRatioBody } }, async (request) => {
    await ctx.prices.setGroupRatio(request.params.group, request.body.ratio);
    await ctx.announce("prices");
    return ok({ group: request.params.group, ratio: request.body.ratio });
  });

  app.get("/tasks", { schema: { querystring: TaskListQuery } }, async (request) => {
    const q = request.query;
    let query = ctx.store.db.selectFrom("tasks").selectAll();
    if (q.user_id !== undefined) query = query.where("user_id", "=", Number(q.user_id));
    if (q.status !== undefined) query = query.where("status", "=", q.status);
    if (q.platform !== undefined) query = query.where("platform", "=", q.platform);
    if (q.task_id !== undefined) query = query.where("task_id", "=", q.task_id);
    if (q.after !== undefined) query = query.where("id", ">", Number(q.after));
    const rows = await query
      .orderBy("id")
      .limit(limitOf(q.limit, 50, 1000))
      .execute();
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
  });

  app.get("/webhooks", { schema: { querystring: WebhookListQuery } }, async (request) => {
    const q = request.query;
    let query = ctx.store.db.selectFrom("webhook_deliveries").selectAll();
    if (q.user_id !== undefined) query = query.where("user_id", "=", Number(q.user_id));
    if (q.task_id !== undefined) query = query.where("task_id", "=", q.task_id);
    if (q.status !== undefined) query = query.where("status", "=", q.status);
    if (q.after !== undefined) query = query.where("id", ">", Number(q.after));
    const rows = await query
      .orderBy("id")
      .limit(limitOf(q.limit, 50, 1000))
      .execute();
    return ok(
      rows.map((r) => ({
        id: Number(r.id),
        webhook_id: r.webhook_id,
        user_id: Number(r.user_id),
        task_id: r.task_id,
        url: r.url,
        event: r.event,
        status: r.status,
        attempts: Number(r.attempts),
        next_attempt_at: Number(r.next_attempt_at),
        last_status: r.last_status === null ? null : Number(r.last_status),
        last_error: r.last_error,
        created_at: Number(r.created_at),
        delivered_at: r.delivered_at === null ? null : Number(r.delivered_at),
      })),
    );
  });
}
