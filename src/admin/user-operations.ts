import { randomUUID } from "node:crypto";
import type { Static } from "@sinclair/typebox";
import { invalidIpEntry } from "../auth/authenticator.js";
import {
  type CreateTokenBody,
  type CreateUserBody,
  TokenView,
  type UpdateTokenBody,
  type UpdateUserBody,
  UserView,
} from "../contracts/admin.js";
import { writableFields } from "../contracts/common.js";
import { GatewayError } from "../core/errors.js";
import { newWebhookSecret } from "../webhooks/signature.js";
import { assertWebhookTarget } from "../webhooks/target.js";
import { type AdminStores, assertSameIdentity, notFound } from "./admin-stores.js";
import { tokenView, userView } from "./views.js";

/**
 * Users and tokens as operators manage them, over HTTP (`/api/admin`) and from the command line
 * alike. Bodies are already checked against their schemas; these functions check what a schema
 * cannot (the user exists, a webhook address is allowed, a revoked token stays revoked).
 */

function checkIpAllow(list: string[] | null | undefined) {
  if (!list) return;
  const bad = invalidIpEntry(list);
  if (bad !== null) {
    throw new GatewayError("GW_ERR_VALIDATION", `body.ip_allow has an entry that is not an IP or CIDR: "${bad}"`, {
      param: "ip_allow",
    });
  }
}

export async function getUser(s: AdminStores, id: number) {
  const user = await s.users.get(id);
  if (!user) throw notFound("user", id);
  return user;
}

export async function showUser(s: AdminStores, id: number): Promise<UserView> {
  return userView(await getUser(s, id));
}

export async function listUsers(s: AdminStores, options: { limit: number; afterId?: number }): Promise<UserView[]> {
  return (await s.users.list(options)).map(userView);
}

export async function createUser(s: AdminStores, body: Static<typeof CreateUserBody>) {
  const user = await s.users.create({ name: body.name, group: body.group, creditLine: body.credit_line });
  if (body.quota) await s.ledger.topUp(Number(user.id), body.quota, `topup:user-${user.id}:initial`, "initial quota");
  // The webhook signing secret is shown here once (and again only when rotated).
  return { ...userView(await getUser(s, Number(user.id))), webhook_secret: user.webhook_secret };
}

/** Applies the writable fields of a body shaped like a GET answer; read-only fields are ignored. */
export async function updateUser(s: AdminStores, id: number, body: Static<typeof UpdateUserBody>): Promise<UserView> {
  assertSameIdentity(body, { id });
  const current = await getUser(s, id);
  if (current.status === "deleted") throw new GatewayError("GW_ERR_CONFLICT", `User ${id} is deleted.`);
  const patch = writableFields(UserView, body);
  if (patch.status === "deleted") {
    throw new GatewayError("GW_ERR_VALIDATION", "body.status cannot be set to deleted; delete the user instead", {
      param: "status",
    });
  }
  if (typeof patch.webhook_url === "string" && patch.webhook_url !== current.webhook_url) {
    patch.webhook_url = await assertWebhookTarget(
      patch.webhook_url,
      { allowPrivate: s.allowPrivateWebhooks },
      "body.webhook_url",
    );
  }
  const user = Object.keys(patch).length > 0 ? await s.users.update(id, patch) : current;
  await s.announce("users");
  return userView(user ?? (await getUser(s, id)));
}

export async function disableUser(s: AdminStores, id: number): Promise<UserView> {
  return updateUser(s, id, { status: "disabled" });
}

/**
 * Deletes a user: the account is refused from now on and every token of it revoked. The row
 * stays, with status `deleted`, so that its ledger, tasks and balance remain on record.
 */
export async function deleteUser(s: AdminStores, id: number): Promise<UserView> {
  const current = await getUser(s, id);
  if (current.status !== "deleted") {
    await s.users.update(id, { status: "deleted" });
    await s.tokens.revokeAllOfUser(id);
    await s.announce("users");
    await s.announce("tokens");
  }
  return showUser(s, id);
}

export async function setUserWebhook(s: AdminStores, id: number, url: string | null): Promise<UserView> {
  await getUser(s, id);
  const target =
    url === null ? null : await assertWebhookTarget(url, { allowPrivate: s.allowPrivateWebhooks }, "body.url");
  return userView((await s.users.update(id, { webhook_url: target })) ?? (await getUser(s, id)));
}

export async function rotateWebhookSecret(s: AdminStores, id: number): Promise<{ webhook_secret: string }> {
  await getUser(s, id);
  const webhookSecret = newWebhookSecret();
  await s.users.update(id, { webhook_secret: webhookSecret });
  return { webhook_secret: webhookSecret };
}

export async function topUpUser(
  s: AdminStores,
  id: number,
  body: { amount: number; reference?: string; note?: string },
) {
  await getUser(s, id);
  const reference = body.reference ?? `topup:${randomUUID()}`;
  const outcome = await s.ledger.topUp(id, body.amount, reference, body.note ?? "");
  return { applied: outcome.applied, reference, quota: Number((await getUser(s, id)).quota) };
}

export async function createToken(s: AdminStores, userId: number, body: Static<typeof CreateTokenBody>) {
  const user = await getUser(s, userId);
  if (user.status === "deleted") throw new GatewayError("GW_ERR_CONFLICT", `User ${userId} is deleted.`);
  checkIpAllow(body.ip_allow);
  const { row, key } = await s.tokens.create({
    userId,
    name: body.name,
    expiresAt: body.expires_at ?? null,
    quotaLimit: body.quota_limit ?? null,
    models: body.models ?? null,
    ipAllow: body.ip_allow ?? null,
  });
  // The only time the key is shown.
  return { ...tokenView(row), key };
}

export async function listTokens(s: AdminStores, userId: number): Promise<TokenView[]> {
  await getUser(s, userId);
  return (await s.tokens.listByUser(userId)).map(tokenView);
}

export async function showToken(s: AdminStores, id: number): Promise<TokenView> {
  const row = await s.tokens.get(id);
  if (!row) throw notFound("token", id);
  return tokenView(row);
}

export async function updateToken(
  s: AdminStores,
  id: number,
  body: Static<typeof UpdateTokenBody>,
): Promise<TokenView> {
  assertSameIdentity(body, { id });
  const current = await s.tokens.get(id);
  if (!current) throw notFound("token", id);
  if (current.status === "revoked") {
    throw new GatewayError("GW_ERR_CONFLICT", "A revoked token cannot be changed; create a new one.");
  }
  if (body.user_id !== undefined) assertSameIdentity(body, { user_id: Number(current.user_id) });
  const b = writableFields(TokenView, body);
  if (b.status === "revoked") {
    throw new GatewayError("GW_ERR_VALIDATION", "body.status cannot be set to revoked; delete the token instead", {
      param: "status",
    });
  }
  checkIpAllow(b.ip_allow);
  const row = await s.tokens.update(id, {
    name: b.name,
    status: b.status,
    expiresAt: b.expires_at,
    quotaLimit: b.quota_limit,
    models: b.models,
    ipAllow: b.ip_allow,
  });
  if (!row) throw notFound("token", id);
  await s.announce("tokens");
  return tokenView(row);
}

export async function disableToken(s: AdminStores, id: number): Promise<TokenView> {
  return updateToken(s, id, { status: "disabled" });
}

/** Revokes a token: kept for the record, refused from then on. */
export async function deleteToken(s: AdminStores, id: number): Promise<TokenView> {
  const row = await s.tokens.update(id, { status: "revoked" });
  if (!row) throw notFound("token", id);
  await s.announce("tokens");
  return tokenView(row);
}
