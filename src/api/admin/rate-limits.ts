import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { ok } from "../../contracts/common.js";
import { RateLimitKey, RateLimitView, SetRateLimitBody } from "../../contracts/rate-limits.js";
import type { AdminPorts } from "../../core/admin/ports.js";
import * as ops from "../../core/admin/rate-limits.js";
import { answers } from "./admin-deps.js";

const Deleted = Type.Object(
  {
    scope: RateLimitView.properties.scope,
    subject: RateLimitView.properties.subject,
    group: RateLimitView.properties.group,
    deleted: Type.Literal(true),
  },
  { additionalProperties: false },
);

/** The operators' rate limits of metered calls: per token, user and model, and group defaults. */
export async function rateLimitAdminRoutes(base: FastifyInstance, opts: { admin: AdminPorts }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const s = opts.admin;
  app.get(
    "/rate-limits",
    { schema: { summary: "List rate limits", response: answers(Type.Array(RateLimitView)) } },
    async () => ok(await ops.listRateLimits(s)),
  );
  app.put(
    "/rate-limits",
    {
      schema: {
        summary: "Set a rate limit (requests and tokens per minute) of a token, a user, a model or a group",
        body: SetRateLimitBody,
        response: answers(RateLimitView),
      },
    },
    async (request) => ok(await ops.setRateLimit(s, request.body)),
  );
  app.delete(
    "/rate-limits",
    { schema: { summary: "Remove a rate limit", querystring: RateLimitKey, response: answers(Deleted) } },
    async (request) => ok(await ops.removeRateLimit(s, request.query)),
  );
}
