import { randomUUID } from "node:crypto";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { invalidIpEntry } from "../../auth/authenticator.js";
import type { GatewayContext } from "../../context.js";
import { GatewayError } from "../../errors.js";
import { newWebhookSecret } from "../../webhooks/signature.js";
import { assertWebhookTarget } from "../../webhooks/target.js";
import {
  CreateTokenBody,
  CreateUserBody,
  IdParams,
  ListQuery,
  limitOf,
  SetWebhookBody,
  TopUpBody,
  UpdateTokenBody,
  UpdateUserBody,
} from "./schemas.js";
import { ok, tokenView, userView } from "./views.js";

function checkIpAllow(list: string[] | null | undefined) {
  if (!list) return;
  const bad = invalidIpEntry(list);
  if (bad !== null) {
    throw new GatewayError("GW_ERR_VALIDATION", `body.ip_allow has an entry that is not an IP or CIDR: "${bad}"`, {
      param: "ip_allow",
    });
  }
}

/** Users, their balance, top-ups, ledger and tokens. */
export async function userAdminRoutes(base: FastifyInstance, opts: { ctx: GatewayContext }) {
  const { ctx } = opts;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  const userOr404 = async (id: string) => {
    const user = await ctx.users.get(Number(id));
    if (!user) throw new GatewayError("GW_ERR_NOT_FOUND", `No user ${id}.`);
    return user;
  };

  app.get("/users", { schema: { querystring: ListQuery } }, async (request) => {
    const rows = await ctx.users.list({
      limit: limitOf(request.query.limit),
      afterId: request.query.after === undefined ? undefined : Number(request.query.after),
    });
    return ok(rows.map(userView));
  });

  app.post("/users", { schema: { body: CreateUserBody } }, async (request) => {
    const user = await ctx.users.create({
      name: request.body.name,
      group: request.body.group,
      creditLine: request.body.credit_line,
    });
    if (request.body.quota) {
      await ctx.ledger.topUp(Number(user.id), request.body.quota, `topup:user-${user.id}:initial`, "initial quota");
    }
    // The webhook signing secret is shown here once (and again only when rotated).
    return ok({ ...userView((await ctx.users.get(Number(user.id))) ?? user), webhook_secret: user.webhook_secret });
  });

  app.put("/users/:id/webhook", { schema: { params: IdParams, body: SetWebhookBody } }, async (request) => {
    await userOr404(request.params.id);
    const url =
      request.body.url === null
        ? null
        : await assertWebhookTarget(
            request.body.url,
            { allowPrivate: ctx.config.webhooks.allowPrivateUrls },
            "body.url",
          );
    const user = await ctx.users.update(Number(request.params.id), { webhook_url: url });
    return ok(userView(user ?? (await userOr404(request.params.id))));
  });

  app.post("/users/:id/webhook-secret", { schema: { params: IdParams } }, async (request) => {
    await userOr404(request.params.id);
    const webhookSecret = newWebhookSecret();
    await ctx.users.update(Number(request.params.id), { webhook_secret: webhookSecret });
    return ok({ webhook_secret: webhookSecret });
  });

  app.get("/users/:id", { schema: { params: IdParams } }, async (request) =>
    ok(userView(await userOr404(request.params.id))),
  );

  app.patch("/users/:id", { schema: { params: IdParams, body: UpdateUserBody } }, async (request) => {
    await userOr404(request.params.id);
    const user = await ctx.users.update(Number(request.params.id), request.body);
    await ctx.announce("users");
    return ok(userView(user ?? (await userOr404(request.params.id))));
  });

  app.post("/users/:id/topup", { schema: { params: IdParams, body: TopUpBody } }, async (request) => {
    const user = await userOr404(request.params.id);
    const reference = request.body.reference ?? `topup:${randomUUID()}`;
    const outcome = await ctx.ledger.topUp(Number(user.id), request.body.amount, reference, request.body.note ?? "");
    const after = await userOr404(request.params.id);
    return ok({ applied: outcome.applied, reference, quota: Number(after.quota) });
  });

  app.get("/users/:id/ledger", { schema: { params: IdParams, querystring: ListQuery } }, async (request) => {
    await userOr404(request.params.id);
    const rows = await ctx.ledger.entries(Number(request.params.id), {
      limit: limitOf(request.query.limit, 100, 1000),
      beforeId: request.query.before === undefined ? undefined : Number(request.query.before),
    });
    return ok(
      rows.map((r) => ({
        id: Number(r.id),
        user_id: Number(r.user_id),
        token_id: r.token_id === null ? null : Number(r.token_id),
        kind: r.kind,
        amount: Number(r.amount),
        reference: r.reference,
        note: r.note,
        created_at: Number(r.created_at),
      })),
    );
  });

  app.post("/users/:id/tokens", { schema: { params: IdParams, body: CreateTokenBody } }, async (request) => {
    const user = await userOr404(request.params.id);
    checkIpAllow(request.body.ip_allow);
    const { row, key } = await ctx.tokens.create({
      userId: Number(user.id),
      name: request.body.name,
      expiresAt: request.body.expires_at ?? null,
      quotaLimit: request.body.quota_limit ?? null,
      models: request.body.models ?? null,
      ipAllow: request.body.ip_allow ?? null,
    });
    // The only time the key is shown.
    return ok({ ...tokenView(row), key });
  });

  app.get("/users/:id/tokens", { schema: { params: IdParams } }, async (request) => {
    await userOr404(request.params.id);
    return ok((await ctx.tokens.listByUser(Number(request.params.id))).map(tokenView));
  });

  app.patch("/tokens/:id", { schema: { params: IdParams, body: UpdateTokenBody } }, async (request) => {
    checkIpAllow(request.body.ip_allow);
    const b = request.body;
    const current = await ctx.tokens.get(Number(request.params.id));
    if (!current) throw new GatewayError("GW_ERR_NOT_FOUND", `No token ${request.params.id}.`);
    if (current.status === "revoked") {
      throw new GatewayError("GW_ERR_CONFLICT", "A revoked token cannot be changed; create a new one.");
    }
    const row = await ctx.tokens.update(Number(request.params.id), {
      name: b.name,
      status: b.status,
      expiresAt: b.expires_at,
      quotaLimit: b.quota_limit,
      models: b.models,
      ipAllow: b.ip_allow,
    });
    if (!row) throw new GatewayError("GW_ERR_NOT_FOUND", `No token ${request.params.id}.`);
    await ctx.announce("tokens");
    return ok(tokenView(row));
  });

  app.delete("/tokens/:id", { schema: { params: IdParams } }, async (request) => {
    const row = await ctx.tokens.update(Number(request.params.id), { status: "revoked" });
    if (!row) throw new GatewayError("GW_ERR_NOT_FOUND", `No token ${request.params.id}.`);
    await ctx.announce("tokens");
    return ok(tokenView(row));
  });
}
