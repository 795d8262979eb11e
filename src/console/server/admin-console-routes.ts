import { randomBytes } from "node:crypto";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { Envelope, IdParams, ok } from "../../contracts/common.js";
import { ConsoleSettingsView, InviteCreated } from "../../contracts/console.js";
import { notFound } from "../../core/admin/checks.js";
import { GatewayError } from "../../core/errors.js";
import { sha256Hex, unixNow } from "../../core/ids.js";
import { type ConsoleRouteDeps, SELF_SIGNUP_SETTING, selfSignupOn } from "./route-deps.js";

/** The path of the console page that accepts an invite; the token rides in the fragment, never sent. */
export const INVITE_PAGE = "/console/#/invite/";

/** Operator routes of the admin API that write the console's own tables: invites and settings. */
export async function consoleAdminRoutes(
  base: FastifyInstance,
  opts: { deps: Pick<ConsoleRouteDeps, "users" | "console" | "config" | "publicBaseUrl"> },
) {
  const { deps } = opts;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    "/users/:id/invite",
    {
      schema: {
        summary: "A one-time link for the user to set a password and sign in to the console",
        params: IdParams,
        response: { 200: Envelope(InviteCreated) },
      },
    },
    async (request) => {
      const id = Number(request.params.id);
      const user = await deps.users.get(id);
      if (!user || user.status === "deleted") throw notFound("user", id);
      if (user.status !== "enabled") throw new GatewayError("GW_ERR_CONFLICT", `User ${id} is disabled.`);
      const token = randomBytes(32).toString("base64url");
      const now = unixNow();
      const expiresAt = now + deps.config.console.inviteSeconds;
      await deps.console.sessions.createInvite({
        token_hash: sha256Hex(token),
        user_id: id,
        created_at: now,
        expires_at: expiresAt,
      });
      return ok({ invite_url: `${deps.publicBaseUrl()}${INVITE_PAGE}${token}`, expires_at: expiresAt });
    },
  );

  app.get(
    "/console-settings",
    { schema: { summary: "The console's settings", response: { 200: Envelope(ConsoleSettingsView) } } },
    async () => ok({ self_signup: await selfSignupOn(deps) }),
  );

  app.put(
    "/console-settings",
    {
      schema: {
        summary: "Change the console's settings (self sign-up on or off)",
        body: ConsoleSettingsView,
        response: { 200: Envelope(ConsoleSettingsView) },
      },
    },
    async (request) => {
      await deps.console.settings.set(SELF_SIGNUP_SETTING, request.body.self_signup);
      return ok({ self_signup: await selfSignupOn(deps) });
    },
  );
}
