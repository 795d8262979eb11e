import type { FastifyInstance, FastifyRequest } from "fastify";
import type { GatewayContext } from "../../context.js";
import { GatewayError } from "../../core/errors.js";
import { FAMILY_SPECS, isActionOpen, TASK_FAMILIES, type TaskFamily } from "../../core/tasks/families.js";
import { renderTaskRecord } from "../../core/tasks/record.js";
import type { TaskBody } from "../../core/tasks/request-bodies.js";
import { TaskStore } from "../../store/tasks.js";
import { principalOf, requireToken } from "../auth-hook.js";
import { answerIdempotently, IdempotencyHeaders } from "../idempotent-route.js";
import { installInputBounds } from "../input-bounds.js";
import { installSurface } from "../surfaces.js";
import {
  batchFetchSchema,
  CallbackAnswer,
  CallbackParams,
  FetchBatchAnswer,
  FetchOneAnswer,
  FetchParams,
  SUBMIT_SCHEMAS,
  SubmitAnswer,
} from "./schemas.js";
import { submitTask } from "./submit-task.js";

const SUBMITTED_MESSAGE = "task submitted successfully";

/**
 * Task records keep the field order of the interface document (`result_url` after `fail_reason`);
 * the schema serialiser would write required fields first, so these answers are plain JSON.
 */
const inDocumentOrder = () => (data: unknown) => JSON.stringify(data);

function closedActionGuard(ctx: GatewayContext, family: TaskFamily, action: string) {
  return async (_request: FastifyRequest) => {
    if (!isActionOpen(family, action, ctx.config.tasks.enabledActions)) {
      throw new GatewayError("GW_ERR_ACTION_UNAVAILABLE", `The action ${action} is currently unavailable.`);
    }
  };
}

/** Submit, fetch and callback routes of one family. */
async function familyRoutes(scope: FastifyInstance, ctx: GatewayContext, store: TaskStore, family: TaskFamily) {
  const spec = FAMILY_SPECS[family];
  const schemas = SUBMIT_SCHEMAS[family] ?? {};

  await scope.register(async (authed) => {
    authed.addHook("onRequest", requireToken(ctx, "bearer"));

    for (const action of spec.actions) {
      const schema = schemas[action];
      if (!schema) continue;
      authed.post(
        `/submit/${action}`,
        {
          schema: {
            body: schema,
            headers: IdempotencyHeaders,
            summary: `Submit a ${action} task of family ${family}`,
            response: { 200: SubmitAnswer },
          },
          ...(spec.closedByDefault.includes(action) ? { preValidation: closedActionGuard(ctx, family, action) } : {}),
        },
        async (request, reply) => {
          // callback_url is the gateway's own field: it never reaches the upstream.
          const { callback_url: callbackUrl, ...body } = request.body as TaskBody & { callback_url?: string };
          return answerIdempotently(ctx.idempotency, request, reply, async (run) => {
            const taskId = await submitTask(ctx, store, {
              family,
              action,
              body: body as TaskBody,
              principal: principalOf(request),
              callbackUrl: callbackUrl ?? null,
              run,
            });
            return { status: 200, body: { code: "success", message: SUBMITTED_MESSAGE, data: taskId } };
          });
        },
      );
    }

    // Not an operation: the answer to an action this family does not have.
    authed.post("/submit/:action", { schema: { hide: true } }, async (request) => {
      const { action } = request.params as { action: string };
      throw new GatewayError(
        "GW_ERR_BAD_REQUEST",
        `Unknown action "${action}" for ${family}; known actions: ${spec.actions.join(", ")}.`,
        { param: "action" },
      );
    });

    authed.get(
      "/fetch/:id",
      {
        schema: { summary: `Fetch one ${family} task`, params: FetchParams, response: { 200: FetchOneAnswer } },
        serializerCompiler: inDocumentOrder,
      },
      async (request) => {
        const { id } = request.params as { id: string };
        const row = await store.getOwned(family, principalOf(request).userId, id);
        if (!row) throw new GatewayError("GW_ERR_NOT_FOUND", `No task ${id} was found.`);
        return { code: "success", message: "", data: renderTaskRecord(row) };
      },
    );

    authed.post(
      "/fetch",
      {
        schema: {
          summary: `Fetch ${family} tasks by id`,
          body: batchFetchSchema(ctx.config.tasks.maxBatchFetchIds),
          response: { 200: FetchBatchAnswer },
        },
        serializerCompiler: inDocumentOrder,
      },
      async (request) => {
        const ids = [...new Set((request.body as { ids: string[] }).ids)];
        const rows = await store.listOwned(family, principalOf(request).userId, ids);
        const byId = new Map(rows.map((r) => [r.task_id, r]));
        const records = ids.flatMap((id) => {
          const row = byId.get(id);
          return row ? [renderTaskRecord(row)] : [];
        });
        return { code: "success", message: "", data: records };
      },
    );
  });

  if (spec.channelType === "generate-record") {
    // The upstream's callback: no bearer token, the secret in the path names the task. It only
    // makes the poller look at that task now; the poll stays the source of truth.
    scope.post(
      "/callback/:secret",
      {
        schema: { summary: "The upstream's task callback", params: CallbackParams, response: { 200: CallbackAnswer } },
        bodyLimit: 1024 * 1024,
      },
      async (request) => {
        const { secret } = request.params as { secret: string };
        const poked = await store.pokeByCallbackSecret(family, secret);
        if (!poked) throw new GatewayError("GW_ERR_NOT_FOUND", "No running task has this callback address.");
        return { code: "success", message: "", data: null };
      },
    );
  }
}

/** Audio task surface: /audioa/... and /audiob/... (envelope shape). */
export async function taskRoutes(app: FastifyInstance, opts: { ctx: GatewayContext }) {
  const { ctx } = opts;
  const store = new TaskStore(ctx.store.db, ctx.ledger, ctx.store.dialect);
  for (const family of TASK_FAMILIES) {
    await app.register(
      async (scope) => {
        installSurface(scope, "envelope");
        installInputBounds(scope, ctx.config.bodies.tasks);
        await familyRoutes(scope, ctx, store, family);
      },
      { prefix: `/${family}` },
    );
  }
}
