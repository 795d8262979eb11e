import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { IdParams, ListQuery, limitOf, ok } from "../../contracts/common.js";
import {
  GenerateBatchBody,
  RedemptionBatchView,
  RedemptionCodeQuery,
  RedemptionCodeView,
} from "../../contracts/redemptions.js";
import type { AdminPorts } from "../../core/admin/ports.js";
import * as codes from "../../core/admin/redemption-codes.js";
import { unixNow } from "../../core/ids.js";
import { answers } from "./admin-deps.js";

/** Batches of redemption codes: generate, list, export once as CSV, disable (docs/redemption-codes.md). */
export async function redemptionAdminRoutes(base: FastifyInstance, opts: { admin: AdminPorts }) {
  const s = opts.admin;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const id = (params: { id: string }) => Number(params.id);
  const page = (query: { limit?: string; after?: string }) => ({
    limit: limitOf(query.limit, 100, 1000),
    afterId: query.after === undefined ? undefined : Number(query.after),
  });

  app.post(
    "/redemption-batches",
    {
      schema: {
        summary: "Generate a batch of redemption codes",
        description:
          "Each code credits `quota`, or `amount` in currency units (converted with QUOTA_PER_UNIT). " +
          "The codes are shown only by the batch's one export.",
        body: GenerateBatchBody,
        response: answers(RedemptionBatchView),
      },
    },
    async (request) => ok(await codes.generateRedemptionBatch(s, request.body, unixNow())),
  );

  app.get(
    "/redemption-batches",
    {
      schema: {
        summary: "List batches of redemption codes",
        description: "Newest first; `after` pages by id.",
        querystring: ListQuery,
        response: answers(Type.Array(RedemptionBatchView)),
      },
    },
    async (request) => ok(await codes.listRedemptionBatches(s, page(request.query))),
  );

  app.get(
    "/redemption-batches/:id",
    {
      schema: { summary: "Show a batch of redemption codes", params: IdParams, response: answers(RedemptionBatchView) },
    },
    async (request) => ok(await codes.showRedemptionBatch(s, id(request.params))),
  );

  app.get(
    "/redemption-batches/:id/codes",
    {
      schema: {
        summary: "List a batch's codes",
        description: "Oldest first, each code by its start and end only; `after` pages by id.",
        params: IdParams,
        querystring: RedemptionCodeQuery,
        response: answers(Type.Array(RedemptionCodeView)),
      },
    },
    async (request) =>
      ok(
        await codes.listRedemptionCodes(s, id(request.params), {
          ...page(request.query),
          status: request.query.status,
        }),
      ),
  );

  app.post(
    "/redemption-batches/:id/export",
    {
      schema: {
        summary: "Export a batch's codes as CSV, once",
        description:
          "Answers `text/csv` (`code,batch_id,quota,amount,expires_at`) with every code in full, and erases " +
          "the full codes from the store: a second export is a 409.",
        params: IdParams,
        response: { 200: Type.String({ description: "the CSV" }) },
      },
    },
    async (request, reply) => {
      const csv = await codes.exportRedemptionBatch(s, id(request.params));
      return reply
        .type("text/csv; charset=utf-8")
        .header("content-disposition", `attachment; filename="redemption-batch-${id(request.params)}.csv"`)
        .send(csv);
    },
  );

  for (const [verb, status] of [
    ["disable", "disabled"],
    ["enable", "enabled"],
  ] as const) {
    app.post(
      `/redemption-batches/:id/${verb}`,
      {
        schema: {
          summary: `${verb === "disable" ? "Disable" : "Enable"} a batch of redemption codes`,
          params: IdParams,
          response: answers(RedemptionBatchView),
        },
      },
      async (request) => ok(await codes.setRedemptionBatchStatus(s, id(request.params), status)),
    );
  }

  app.post(
    "/redemption-codes/:id/disable",
    {
      schema: {
        summary: "Disable one redemption code",
        description: "A code already redeemed is a 409: its credit stands.",
        params: IdParams,
        response: answers(RedemptionCodeView),
      },
    },
    async (request) => ok(await codes.disableRedemptionCode(s, id(request.params))),
  );
}
