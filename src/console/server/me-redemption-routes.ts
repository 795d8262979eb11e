import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { RedeemBody, RedemptionView } from "../../contracts/redemptions.js";
import { redeemCode } from "../../core/redemptions/redeem.js";
import { type ConsoleRouteDeps, requireUser } from "./route-deps.js";

/**
 * A user redeems a code in the console. Failed attempts count per user and per client address,
 * so codes cannot be guessed at speed from one browser or across accounts.
 */
export async function consoleMeRedemptionRoutes(base: FastifyInstance, opts: { deps: ConsoleRouteDeps }) {
  const { deps } = opts;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    "/me/redemptions",
    { schema: { summary: "Redeem a code", body: RedeemBody, response: { 200: RedemptionView } } },
    async (request) => {
      const session = await requireUser(deps, request);
      return redeemCode(deps.redemptions, {
        userId: session.subjectId,
        tokenId: null,
        code: request.body.code,
        address: request.ip,
      });
    },
  );
}
