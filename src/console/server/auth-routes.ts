import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { hashPassword, passwordProblem } from "../../auth/passwords.js";
import {
  AcceptInviteBody,
  InviteAnswer,
  InviteParams,
  LoginBody,
  SessionAnswerSchema,
  SignupBody,
  SignupSettings,
} from "../../contracts/console.js";
import { GatewayError } from "../../core/errors.js";
import { sha256Hex, unixNow } from "../../core/ids.js";
import { answerOf } from "./console-auth.js";
import { type ConsoleRouteDeps, requireSession, selfSignupOn } from "./route-deps.js";

/** Routes that sign in take no credentials (the document marks them public). */
const PUBLIC: Record<string, string[]>[] = [];

/** What every route that signs in declares: no credentials, and the new session as the answer. */
const SIGNS_IN = { security: PUBLIC, response: { 200: SessionAnswerSchema } };

const INVITE_GONE = "This invite link is unknown, used or expired.";

function checkPassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem) throw new GatewayError("GW_ERR_VALIDATION", `body.password ${problem}`, { param: "password" });
}

/** Sign-in, sign-out, the session, self sign-up and invites. */
export async function consoleAuthRoutes(base: FastifyInstance, opts: { deps: ConsoleRouteDeps }) {
  const { deps } = opts;
  const { auth } = deps.console;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const cost = deps.config.console.passwordCost;

  app.get(
    "/session",
    { schema: { summary: "The signed-in account and its CSRF token", response: { 200: SessionAnswerSchema } } },
    async (request) => answerOf(await requireSession(deps, request)),
  );

  app.post(
    "/login",
    {
      schema: {
        summary: "Sign in (operator name, or user name or email); sets the session cookie",
        body: LoginBody,
        ...SIGNS_IN,
      },
    },
    async (request, reply) => {
      const account = await deps.console.signIn
        .check(request.body.login, request.body.password, request.ip)
        .catch((err: unknown) => {
          // Who tried is not logged: a password typed into the name field would land in the log.
          request.log.info({ address: request.ip }, "a console sign-in was refused");
          throw err;
        });
      request.log.info({ role: account.role, id: account.id }, "signed in to the console");
      return answerOf(await auth.start(request, reply, account));
    },
  );

  app.post(
    "/logout",
    {
      schema: {
        summary: "Sign out: the session ends on the server and its cookie is cleared",
        response: { 204: Type.Null({ description: "Signed out (also when there was no session)" }) },
      },
    },
    async (request, reply) => {
      await auth.end(request, reply);
      return reply.status(204).send(null);
    },
  );

  app.get(
    "/signup-settings",
    {
      schema: {
        summary: "Whether visitors may create their own account",
        security: PUBLIC,
        response: { 200: SignupSettings },
      },
    },
    async () => ({ selfSignup: await selfSignupOn(deps) }),
  );

  app.post(
    "/signup",
    {
      schema: {
        summary: "Create a user account and sign in (only while an operator allows self sign-up)",
        body: SignupBody,
        ...SIGNS_IN,
      },
    },
    async (request, reply) => {
      if (!(await selfSignupOn(deps))) {
        throw new GatewayError("GW_ERR_FORBIDDEN", "Self sign-up is off: ask an operator for an invite.");
      }
      const { name, email, password } = request.body;
      checkPassword(password);
      const taken = await deps.console.accounts.userNameOrEmailTaken(name, email);
      if (taken) {
        throw new GatewayError("GW_ERR_CONFLICT", `body.${taken} is already used by another account`, { param: taken });
      }
      const hash = await hashPassword(password, cost);
      const user = await deps.users.create({ name });
      const id = Number(user.id);
      if (!(await deps.console.accounts.setUserEmail(id, email))) {
        await deps.users.update(id, { status: "deleted" });
        throw new GatewayError("GW_ERR_CONFLICT", "body.email is already used by another account", { param: "email" });
      }
      await deps.console.accounts.setUserPassword(id, hash);
      request.log.info({ userId: id }, "a user signed up from the console");
      return answerOf(await auth.start(request, reply, { role: "user", id, name, email: email.toLowerCase() }));
    },
  );

  const openInvite = async (token: string) => {
    const invite = await deps.console.sessions.openInvite(sha256Hex(token), unixNow());
    const user = invite ? await deps.users.get(Number(invite.user_id)) : undefined;
    if (!invite || !user || user.status !== "enabled") {
      throw new GatewayError("GW_ERR_NOT_FOUND", INVITE_GONE);
    }
    return { invite, user };
  };

  app.get(
    "/invites/:token",
    {
      schema: {
        summary: "The account an invite link is for",
        security: PUBLIC,
        params: InviteParams,
        response: { 200: InviteAnswer },
      },
    },
    async (request) => {
      const { user } = await openInvite(request.params.token);
      return { name: user.name, email: user.email ?? null };
    },
  );

  app.post(
    "/invites/:token/accept",
    {
      schema: {
        summary: "Set the invited user's password and sign in; the link works once",
        params: InviteParams,
        body: AcceptInviteBody,
        ...SIGNS_IN,
      },
    },
    async (request, reply) => {
      checkPassword(request.body.password);
      const { user } = await openInvite(request.params.token);
      const hash = await hashPassword(request.body.password, cost);
      if (!(await deps.console.sessions.useInvite(sha256Hex(request.params.token), unixNow()))) {
        throw new GatewayError("GW_ERR_NOT_FOUND", INVITE_GONE);
      }
      const id = Number(user.id);
      await deps.console.accounts.setUserPassword(id, hash);
      // A new password ends every session the account had.
      await deps.console.sessions.deleteAllOf("user", id);
      return answerOf(
        await auth.start(request, reply, { role: "user", id, name: user.name, email: user.email ?? null }),
      );
    },
  );
}
