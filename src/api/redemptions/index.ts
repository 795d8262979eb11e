import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import type { Config } from "../../config/load.js";
import { RedeemBody, RedemptionView } from "../../contracts/redemptions.js";
import type { RedemptionPorts } from "../../core/redemptions/ports.js";
import { redeemCode } from "../../core/redemptions/redeem.js";
import { installInputBounds } from "../../http/input-bounds.js";
import { installSurface } from "../../http/surfaces.js";
import { principalOf, requireToken, type TokenAuthDeps } from "../auth-hook.js";
import { errorShapeOf } from "../route-table.js";

/** What the redemption API uses. */
export type RedemptionApiDeps = TokenAuthDeps & { redemptions: RedemptionPorts; config: Pick<Config, "bodies"> };

/**
 * `POST /v1/redemptions`: the token's user redeems a code (docs/redemption-codes.md). Errors in
 * OpenAI's shape, `code` naming why a code credited nothing, `param` the field.
 */
export async function redemptionRoutes(base: FastifyInstance, opts: { deps: RedemptionApiDeps }) {
  const { deps } = opts;
  installSurface(base, errorShapeOf(base.prefix), { notFound: false });
  base.addHook("onRequest", requireToken(deps));
  installInputBounds(base, deps.config.bodies.admin);
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    "/redemptions",
    {
      schema: {
        summary: "Redeem a code",
        description:
          "Credits the token's user with the code's quota, once. An unknown, used, expired or disabled code " +
          "(or one past the batch's limit per user) credits nothing and counts toward the failed-attempt limit.",
        body: RedeemBody,
        response: { 200: { ...RedemptionView, description: "Credited: the quota added and the balance after it" } },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      return redeemCode(deps.redemptions, {
        userId: principal.userId,
        tokenId: principal.tokenId,
        code: request.body.code,
      });
    },
  );
}
