import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import {
  CreatedTokenView,
  CreatedUserView,
  CreateTokenBody,
  CreateUserBody,
  SetWebhookBody,
  TokenView,
  TopUpBody,
  UpdateTokenBody,
  UpdateUserBody,
  UserView,
} from "../../contracts/admin.js";
import { IdParams, ListQuery, limitOf, ok } from "../../contracts/common.js";
import { LedgerEntryView, TopUpView } from "../../contracts/records.js";
import type { AdminPorts } from "../../core/admin/ports.js";
import * as ops from "../../core/admin/users.js";
import { userView } from "../../core/admin/views.js";
import { answers, type OperatorLists } from "./admin-deps.js";
import { UserListQuery } from "./ops-schemas.js";

/** Users, their balance, top-ups, ledger and tokens. */
export async function userAdminRoutes(base: FastifyInstance, opts: { admin: AdminPorts; lists: OperatorLists }) {
  const s = opts.admin;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const id = (params: { id: string }) => Number(params.id);

  app.get(
    "/users",
    {
      schema: {
        summary: "List users",
        description: "Oldest first; `q` keeps the users whose name or email holds it (any case); `after` pages by id.",
        querystring: UserListQuery,
        response: answers(Type.Array(UserView)),
      },
    },
    async (request) => {
      const rows = await opts.lists.users({
        q: request.query.q,
        limit: limitOf(request.query.limit),
        after: request.query.after === undefined ? undefined : Number(request.query.after),
      });
      return ok(rows.map(userView));
    },
  );

  app.post(
    "/users",
    { schema: { summary: "Create a user", body: CreateUserBody, response: answers(CreatedUserView) } },
    async (request) => ok(await ops.createUser(s, request.body)),
  );

  app.get(
    "/users/:id",
    { schema: { summary: "Show a user", params: IdParams, response: answers(UserView) } },
    async (request) => ok(await ops.showUser(s, id(request.params))),
  );

  app.patch(
    "/users/:id",
    {
      schema: {
        summary: "Change a user",
        description: "Takes any fields of the user as GET shows them; read-only ones are ignored.",
        params: IdParams,
        body: UpdateUserBody,
        response: answers(UserView),
      },
    },
    async (request) => ok(await ops.updateUser(s, id(request.params), request.body)),
  );

  app.delete(
    "/users/:id",
    {
      schema: {
        summary: "Delete a user",
        description: "Refuses the user from now on and revokes its tokens; the record stays with status `deleted`.",
        params: IdParams,
        response: answers(UserView),
      },
    },
    async (request) => ok(await ops.deleteUser(s, id(request.params))),
  );

  app.put(
    "/users/:id/webhook",
    {
      schema: {
        summary: "Set a user's webhook URL",
        params: IdParams,
        body: SetWebhookBody,
        response: answers(UserView),
      },
    },
    async (request) => ok(await ops.setUserWebhook(s, id(request.params), request.body.url)),
  );

  app.post(
    "/users/:id/webhook-secret",
    {
      schema: {
        summary: "Rotate a user's webhook secret",
        params: IdParams,
        response: answers(Type.Object({ webhook_secret: Type.String() }, { additionalProperties: false })),
      },
    },
    async (request) => ok(await ops.rotateWebhookSecret(s, id(request.params))),
  );

  app.post(
    "/users/:id/topup",
    { schema: { summary: "Top up a user", params: IdParams, body: TopUpBody, response: answers(TopUpView) } },
    async (request) => ok(await ops.topUpUser(s, id(request.params), request.body)),
  );

  app.get(
    "/users/:id/ledger",
    {
      schema: {
        summary: "A user's ledger, newest first",
        params: IdParams,
        querystring: ListQuery,
        response: answers(Type.Array(LedgerEntryView)),
      },
    },
    async (request) => {
      const page = {
        limit: limitOf(request.query.limit, 100, 1000),
        beforeId: request.query.before === undefined ? undefined : Number(request.query.before),
      };
      return ok(await ops.userLedger(s, id(request.params), page));
    },
  );

  app.post(
    "/users/:id/tokens",
    {
      schema: {
        summary: "Create a token",
        params: IdParams,
        body: CreateTokenBody,
        response: answers(CreatedTokenView),
      },
    },
    async (request) => ok(await ops.createToken(s, id(request.params), request.body)),
  );

  app.get(
    "/users/:id/tokens",
    { schema: { summary: "List a user's tokens", params: IdParams, response: answers(Type.Array(TokenView)) } },
    async (request) => ok(await ops.listTokens(s, id(request.params))),
  );

  app.get(
    "/tokens/:id",
    { schema: { summary: "Show a token", params: IdParams, response: answers(TokenView) } },
    async (request) => ok(await ops.showToken(s, id(request.params))),
  );

  app.patch(
    "/tokens/:id",
    {
      schema: {
        summary: "Change a token",
        description:
          "Takes any fields of the token as GET shows them; read-only ones are ignored, `null` removes a limit.",
        params: IdParams,
        body: UpdateTokenBody,
        response: answers(TokenView),
      },
    },
    async (request) => ok(await ops.updateToken(s, id(request.params), request.body)),
  );

  app.delete(
    "/tokens/:id",
    { schema: { summary: "Revoke a token", params: IdParams, response: answers(TokenView) } },
    async (request) => ok(await ops.deleteToken(s, id(request.params))),
  );
}
