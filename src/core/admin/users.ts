import { GatewayError } from "../errors.js";
import { assertSameIdentity, found, refused } from "./checks.js";
import type { AdminPorts, UserRecord } from "./ports.js";
import {
  type CreatedTokenView,
  type CreatedUserView,
  type CreateTokenInput,
  type CreateUserInput,
  type LedgerEntryView,
  TOKEN_WRITABLE,
  type TokenPatch,
  type TokenView,
  type TopUpInput,
  USER_WRITABLE,
  type UserPatch,
  type UserView,
  writableFields,
} from "./shapes.js";
import { ledgerEntryView, tokenView, userView } from "./views.js";

/**
 * Users and tokens as operators manage them, over HTTP (`/api/admin`), from the console (a user's
 * own tokens and webhook) and from the command line alike. Bodies are already checked against
 * their schemas; these functions check what a schema cannot (the user exists, a webhook address
 * is allowed, a revoked token stays revoked).
 */

function checkIpAllow(s: AdminPorts, list: string[] | null | undefined) {
  if (!list) return;
  const bad = s.invalidIpEntry(list);
  if (bad !== null) throw refused("ip_allow", `has an entry that is not an IP or CIDR: "${bad}"`);
}

function assertNotDeleted(user: UserRecord, id: number): void {
  if (user.status === "deleted") throw new GatewayError("GW_ERR_CONFLICT", `User ${id} is deleted.`);
}

/** The user as stored, its webhook secret included; a 404 when there is none. */
export async function getUser(s: AdminPorts, id: number): Promise<UserRecord> {
  return found(await s.users.get(id), "user", id);
}

export async function showUser(s: AdminPorts, id: number): Promise<UserView> {
  return userView(await getUser(s, id));
}

export async function listUsers(s: AdminPorts, options: { limit: number; afterId?: number }): Promise<UserView[]> {
  return (await s.users.list(options)).map(userView);
}

export async function createUser(s: AdminPorts, body: CreateUserInput): Promise<CreatedUserView> {
  const user = await s.users.create({ name: body.name, group: body.group, creditLine: body.credit_line });
  if (body.quota) await s.ledger.topUp(Number(user.id), body.quota, `topup:user-${user.id}:initial`, "initial quota");
  // The webhook signing secret is shown here once (and again only when rotated).
  return { ...userView(await getUser(s, Number(user.id))), webhook_secret: user.webhook_secret };
}

/** Applies the writable fields of a body shaped like a GET answer; read-only fields are ignored. */
export async function updateUser(s: AdminPorts, id: number, body: UserPatch): Promise<UserView> {
  assertSameIdentity(body, { id });
  const current = await getUser(s, id);
  assertNotDeleted(current, id);
  const patch = writableFields(USER_WRITABLE, body);
  if (patch.status === "deleted") throw refused("status", "cannot be set to deleted; delete the user instead");
  if (typeof patch.webhook_url === "string" && patch.webhook_url !== current.webhook_url) {
    patch.webhook_url = await s.checkWebhookTarget(patch.webhook_url, "body.webhook_url");
  }
  const user = Object.keys(patch).length > 0 ? await s.users.update(id, patch) : current;
  await s.announce("users");
  return userView(user ?? (await getUser(s, id)));
}

export async function disableUser(s: AdminPorts, id: number): Promise<UserView> {
  return updateUser(s, id, { status: "disabled" });
}

/**
 * Deletes a user: the account is refused from now on and every token of it revoked. The row
 * stays, with status `deleted`, so that its ledger, tasks and balance remain on record.
 */
export async function deleteUser(s: AdminPorts, id: number): Promise<UserView> {
  const current = await getUser(s, id);
  if (current.status !== "deleted") {
    await s.users.update(id, { status: "deleted" });
    await s.tokens.revokeAllOfUser(id);
    await s.announce("users");
    await s.announce("tokens");
  }
  return showUser(s, id);
}

export async function setUserWebhook(s: AdminPorts, id: number, url: string | null): Promise<UserView> {
  await getUser(s, id);
  const target = url === null ? null : await s.checkWebhookTarget(url, "body.url");
  return userView((await s.users.update(id, { webhook_url: target })) ?? (await getUser(s, id)));
}

export async function rotateWebhookSecret(s: AdminPorts, id: number): Promise<{ webhook_secret: string }> {
  await getUser(s, id);
  const webhookSecret = s.newWebhookSecret();
  await s.users.update(id, { webhook_secret: webhookSecret });
  return { webhook_secret: webhookSecret };
}

export async function topUpUser(
  s: AdminPorts,
  id: number,
  body: TopUpInput,
): Promise<{ applied: boolean; reference: string; quota: number }> {
  await getUser(s, id);
  const reference = body.reference ?? s.newTopUpReference();
  const outcome = await s.ledger.topUp(id, body.amount, reference, body.note ?? "");
  return { applied: outcome.applied, reference, quota: Number((await getUser(s, id)).quota) };
}

/** A user's ledger, newest first; `beforeId` pages back. */
export async function userLedger(
  s: AdminPorts,
  id: number,
  options: { limit: number; beforeId?: number },
): Promise<LedgerEntryView[]> {
  const user = await getUser(s, id);
  return (await s.ledger.entries(Number(user.id), options)).map(ledgerEntryView);
}

export async function createToken(s: AdminPorts, userId: number, body: CreateTokenInput): Promise<CreatedTokenView> {
  assertNotDeleted(await getUser(s, userId), userId);
  checkIpAllow(s, body.ip_allow);
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

export async function listTokens(s: AdminPorts, userId: number): Promise<TokenView[]> {
  await getUser(s, userId);
  return (await s.tokens.listByUser(userId)).map(tokenView);
}

export async function showToken(s: AdminPorts, id: number): Promise<TokenView> {
  return tokenView(found(await s.tokens.get(id), "token", id));
}

export async function updateToken(s: AdminPorts, id: number, body: TokenPatch): Promise<TokenView> {
  assertSameIdentity(body, { id });
  const current = found(await s.tokens.get(id), "token", id);
  if (current.status === "revoked") {
    throw new GatewayError("GW_ERR_CONFLICT", "A revoked token cannot be changed; create a new one.");
  }
  if (body.user_id !== undefined) assertSameIdentity(body, { user_id: Number(current.user_id) });
  const b = writableFields(TOKEN_WRITABLE, body);
  if (b.status === "revoked") throw refused("status", "cannot be set to revoked; delete the token instead");
  checkIpAllow(s, b.ip_allow);
  const row = await s.tokens.update(id, {
    name: b.name,
    status: b.status,
    expiresAt: b.expires_at,
    quotaLimit: b.quota_limit,
    models: b.models,
    ipAllow: b.ip_allow,
  });
  const changed = found(row, "token", id);
  await s.announce("tokens");
  return tokenView(changed);
}

export async function disableToken(s: AdminPorts, id: number): Promise<TokenView> {
  return updateToken(s, id, { status: "disabled" });
}

/** Revokes a token: kept for the record, refused from then on. */
export async function deleteToken(s: AdminPorts, id: number): Promise<TokenView> {
  const row = found(await s.tokens.update(id, { status: "revoked" }), "token", id);
  await s.announce("tokens");
  return tokenView(row);
}
