import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { CreatedTokenView, TokenView } from "../../contracts/admin.js";
import {
  NewTokenBody,
  PlaygroundAnswer,
  SecretAnswer,
  SetWebhookBody,
  TokenIdParams,
  WebhookAnswer,
} from "../../contracts/console.js";
import * as ops from "../../core/admin/users.js";
import { GatewayError } from "../../core/errors.js";
import { unixNow } from "../../core/ids.js";
import { type ConsoleRouteDeps, requireUser } from "./route-deps.js";

/** How long a playground token works (seconds). */
export const PLAYGROUND_TOKEN_SECONDS = 3600;
export const PLAYGROUND_TOKEN_NAME = "console playground";

/** A user's own tokens, webhook and playground token. */
export async function consoleMeTokenRoutes(base: FastifyInstance, opts: { deps: ConsoleRouteDeps }) {
  const { deps } = opts;
  const s = deps.admin;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const webhookOf = async (userId: number) => {
    const user = await ops.getUser(s, userId);
    return { url: user.webhook_url, secret: user.webhook_secret };
  };

  app.get(
    "/me/tokens",
    { schema: { summary: "The user's tokens (never their keys)", response: { 200: Type.Array(TokenView) } } },
    async (request) => ops.listTokens(s, (await requireUser(deps, request)).subjectId),
  );

  app.post(
    "/me/tokens",
    {
      schema: {
        summary: "Create a token; its key is in this answer only",
        body: NewTokenBody,
        response: { 200: CreatedTokenView },
      },
    },
    async (request) => {
      const session = await requireUser(deps, request);
      const created = await ops.createToken(s, session.subjectId, request.body);
      request.log.info({ userId: session.subjectId, tokenId: created.id }, "a user created a token from the console");
      return created;
    },
  );

  app.delete(
    "/me/tokens/:id",
    {
      schema: { summary: "Revoke one of the user's tokens", params: TokenIdParams, response: { 200: TokenView } },
    },
    async (request) => {
      const session = await requireUser(deps, request);
      const id = Number(request.params.id);
      const token = await deps.tokens.get(id);
      // Another user's token and an unknown one look the same.
      if (!token || Number(token.user_id) !== session.subjectId) {
        throw new GatewayError("GW_ERR_NOT_FOUND", `No token ${id}.`);
      }
      return ops.deleteToken(s, id);
    },
  );

  app.get(
    "/me/webhook",
    { schema: { summary: "The user's default webhook URL and signing secret", response: { 200: WebhookAnswer } } },
    async (request) => webhookOf((await requireUser(deps, request)).subjectId),
  );

  app.put(
    "/me/webhook",
    {
      schema: {
        summary: "Set (or with null remove) the default webhook URL",
        body: SetWebhookBody,
        response: { 200: WebhookAnswer },
      },
    },
    async (request) => {
      const session = await requireUser(deps, request);
      await ops.setUserWebhook(s, session.subjectId, request.body.url);
      return webhookOf(session.subjectId);
    },
  );

  app.post(
    "/me/webhook/rotate-secret",
    { schema: { summary: "A new webhook signing secret", response: { 200: SecretAnswer } } },
    async (request) => {
      const rotated = await ops.rotateWebhookSecret(s, (await requireUser(deps, request)).subjectId);
      return { secret: rotated.webhook_secret };
    },
  );

  app.post(
    "/me/playground-token",
    {
      schema: {
        summary: "A token of this user for one hour, for the playground to call the public endpoints",
        response: { 200: PlaygroundAnswer },
      },
    },
    async (request) => {
      const session = await requireUser(deps, request);
      // Earlier playground tokens that ran out are revoked, so they do not pile up in the list.
      await deps.console.accounts.revokeExpiredTokens(session.subjectId, PLAYGROUND_TOKEN_NAME, unixNow());
      const expiresAt = unixNow() + PLAYGROUND_TOKEN_SECONDS;
      const created = await ops.createToken(s, session.subjectId, {
        name: PLAYGROUND_TOKEN_NAME,
        expires_at: expiresAt,
      });
      return { key: created.key, expires_at: expiresAt };
    },
  );
}
