import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { type TProperties, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import {
  channelContracts,
  GroupParams,
  GroupRatioView,
  PriceParams,
  PriceView,
  SetGroupRatioBody,
  SetPriceBody,
  UpdatePriceBody,
} from "../../contracts/admin.js";
import { channelTypeContract } from "../../contracts/channel-types.js";
import { IdParams, ok } from "../../contracts/common.js";
import { ChannelTestView } from "../../contracts/records.js";
import * as ops from "../../core/admin/catalog.js";
import type { AdminPorts } from "../../core/admin/ports.js";
import type { ChannelView } from "../../core/admin/shapes.js";
import { ChannelSettingsApiSchema } from "../../core/channel-settings.js";
import { CAPABILITIES } from "../../core/vendor-adapter.js";
import type { VendorRegistry } from "../../core/vendor-registry.js";
import { testChannel } from "../../routing/channel-probe.js";
import { answers, type OperatorLists } from "./admin-deps.js";

const Deleted = (identity: TProperties) =>
  Type.Object({ ...identity, deleted: Type.Literal(true) }, { additionalProperties: false });

/** Channels (never with their key, with their health), prices and group ratios. */
export async function channelAdminRoutes(
  base: FastifyInstance,
  opts: { lists: OperatorLists; admin: AdminPorts; vendors: VendorRegistry; testTimeoutMs?: number },
) {
  const { lists, admin: s } = opts;
  // A channel's type is one of the registry's, its settings core's: a type it does not know is refused.
  const { ChannelView, CreateChannelBody, UpdateChannelBody } = channelContracts(
    opts.vendors.types,
    ChannelSettingsApiSchema,
  );
  const ChannelTypeView = channelTypeContract(CAPABILITIES);
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const id = (params: { id: string }) => Number(params.id);

  /** The views with the median latency of each channel's recent requests. */
  const withLatency = async (views: ChannelView[]): Promise<ChannelView[]> => {
    const p50 = await lists.latencyP50(views.map((v) => v.id));
    return views.map((v) => ({ ...v, latency_ms_p50: p50.get(v.id) ?? null }));
  };
  const oneWithLatency = async (view: ChannelView) => (await withLatency([view]))[0] as ChannelView;

  app.get(
    "/channel-types",
    {
      schema: {
        summary: "List the channel types",
        description:
          "Every type a channel may have, from the gateway's vendor registry: what its channels serve " +
          "(content, chat, images, tasks, videos), the task platforms it does, and the settings its calls read.",
        response: answers(Type.Array(ChannelTypeView)),
      },
    },
    async () => ok(ops.listChannelTypes(s)),
  );

  app.get("/channels", { schema: { summary: "List channels", response: answers(Type.Array(ChannelView)) } }, async () =>
    ok(await withLatency(await ops.listChannels(s))),
  );

  app.post(
    "/channels",
    { schema: { summary: "Create a channel", body: CreateChannelBody, response: answers(ChannelView) } },
    async (request) => ok(await ops.createChannel(s, request.body)),
  );

  app.get(
    "/channels/:id",
    { schema: { summary: "Show a channel", params: IdParams, response: answers(ChannelView) } },
    async (request) => ok(await oneWithLatency(await ops.showChannel(s, id(request.params)))),
  );

  app.post(
    "/channels/:id/test",
    {
      schema: {
        summary: "Test a channel",
        description:
          "One cheap call to the upstream, the probe of the channel type's vendor (a model list, or an empty " +
          "fetch for task relays), with the channel's key; the answer never shows the key. The channel's " +
          "health is not changed by it.",
        params: IdParams,
        response: answers(ChannelTestView),
      },
    },
    async (request) => {
      const channel = await ops.getChannel(s, id(request.params));
      const result = await testChannel(opts.vendors, channel, opts.testTimeoutMs ?? 5000);
      return ok({ ok: result.ok, latency_ms: result.latencyMs, error: result.error });
    },
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
    async () => ok(await ops.listGroupRatios(s)),
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
}
