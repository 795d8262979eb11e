import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import {
  AddChannelKeysBody,
  AddedChannelKeysView,
  ChannelKeyParams,
  ChannelKeyView,
  ChannelTagParams,
  ChannelTagView,
  ChannelView,
  UpdateChannelKeyBody,
  UpdateChannelTagBody,
} from "../../contracts/admin.js";
import { IdParams, ok } from "../../contracts/common.js";
import * as keys from "../../core/admin/channel-keys.js";
import * as tags from "../../core/admin/channel-tags.js";
import type { AdminPorts } from "../../core/admin/ports.js";
import { answers } from "./admin-deps.js";

/** The key pools of channels (keys taken, shown masked only) and the bulk changes of channels by tag. */
export async function channelKeyAdminRoutes(base: FastifyInstance, opts: { admin: AdminPorts }) {
  const s = opts.admin;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    "/channels/:id/keys",
    {
      schema: {
        summary: "List a channel's keys",
        description:
          "Every key of the channel's pool, masked (its last four characters), with its state (live, dead with " +
          "the reason and time, or disabled) and its calls and failures.",
        params: IdParams,
        response: answers(Type.Array(ChannelKeyView)),
      },
    },
    async (request) => ok(await keys.listChannelKeys(s, Number(request.params.id))),
  );

  app.post(
    "/channels/:id/keys",
    {
      schema: {
        summary: "Add keys to a channel",
        description:
          "Adds `keys` and the keys of `text` (one a line; blank lines and lines starting with `#` skipped). " +
          "Keys the pool holds already are counted in `duplicates`. A channel disabled because none of its keys " +
          "was live is enabled again.",
        params: IdParams,
        body: AddChannelKeysBody,
        response: answers(AddedChannelKeysView),
      },
    },
    async (request) => ok(await keys.addChannelKeys(s, Number(request.params.id), request.body)),
  );

  app.patch(
    "/channels/:id/keys/:keyId",
    {
      schema: {
        summary: "Enable or disable a channel key",
        params: ChannelKeyParams,
        body: UpdateChannelKeyBody,
        response: answers(ChannelKeyView),
      },
    },
    async (request) =>
      ok(
        await keys.setChannelKeyEnabled(
          s,
          Number(request.params.id),
          Number(request.params.keyId),
          request.body.enabled,
        ),
      ),
  );

  app.delete(
    "/channels/:id/keys/:keyId",
    {
      schema: {
        summary: "Remove a channel key",
        description: "A channel keeps at least one key: removing the last one is refused (400).",
        params: ChannelKeyParams,
        response: answers(Type.Object({ id: Type.Integer(), deleted: Type.Literal(true) })),
      },
    },
    async (request) => ok(await keys.removeChannelKey(s, Number(request.params.id), Number(request.params.keyId))),
  );

  app.get(
    "/channel-tags",
    { schema: { summary: "List channel tags", response: answers(Type.Array(ChannelTagView)) } },
    async () => ok(await tags.listChannelTags(s)),
  );

  app.patch(
    "/channel-tags/:tag",
    {
      schema: {
        summary: "Change every channel with a tag",
        description:
          "Sets each field sent on every channel carrying the tag: `status` enables or disables them all, and " +
          "`priority`, `weight`, `price_ratio`, `models`, `groups` and `key_rotation` are set on each. " +
          "A 404 when no channel carries the tag.",
        params: ChannelTagParams,
        body: UpdateChannelTagBody,
        response: answers(Type.Array(ChannelView)),
      },
    },
    async (request) => ok(await tags.updateChannelsByTag(s, request.params.tag, request.body)),
  );
}
