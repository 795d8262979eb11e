import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { assertModelAllowed } from "../../auth/authenticator.js";
import type { BlobStore } from "../../blobs/blob-store.js";
import { GatewayError } from "../../core/errors.js";
import { FAMILY_SPECS, TASK_FAMILIES, type TaskFamily } from "../../core/tasks/families.js";
import { isKindOpen, kindsOf, type TaskKind } from "../../core/tasks/kinds.js";
import type { TaskPollPort, TaskReadPort, TaskSubmitDeps } from "../../core/tasks/ports.js";
import { renderTaskRecord } from "../../core/tasks/record.js";
import { submitTask } from "../../core/tasks/submit.js";
import type { TaskBody } from "../../core/tasks/task-kind.js";
import { type BodyBounds, installInputBounds } from "../../http/input-bounds.js";
import { installSurface } from "../../http/surfaces.js";
import type { IdempotencyKeys } from "../../idempotency/idempotency-keys.js";
import { principalOf } from "../auth-hook.js";
import { answerIdempotently, IdempotencyHeaders } from "../idempotent-route.js";
import { taskFileRoutes } from "./result-files.js";
import {
  batchFetchSchema,
  CallbackAnswer,
  CallbackParams,
  FetchBatchAnswer,
  FetchOneAnswer,
  FetchParams,
  SubmitAnswer,
} from "./schemas.js";

const SUBMITTED_MESSAGE = "task submitted successfully";

/** What the task surface uses, built where the routes are registered. */
export interface TaskSurfaceDeps {
  submit: TaskSubmitDeps;
  /** The records the surface reads (and the callback's poke). */
  store: Pick<TaskReadPort, "getOwned" | "listOwned"> & Pick<TaskPollPort, "pokeByCallbackSecret">;
  idempotency: IdempotencyKeys;
  /** Authenticates the bearer token (and counts the request against its limits). */
  authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  bodies: BodyBounds;
  enabledActions: readonly string[];
  maxBatchFetchIds: number;
  /** The stored task result files, served without credentials. */
  files: BlobStore;
  log: { warn(obj: object, msg: string): void };
}

/**
 * Task records keep the field order of the interface document (`result_url` after `fail_reason`);
 * the schema serialiser would write required fields first, so these answers are plain JSON.
 */
const inDocumentOrder = () => (data: unknown) => JSON.stringify(data);

function closedKindGuard(deps: TaskSurfaceDeps, kind: TaskKind) {
  return async (_request: FastifyRequest) => {
    if (!isKindOpen(kind, deps.enabledActions)) {
      throw new GatewayError("GW_ERR_ACTION_UNAVAILABLE", `The action ${kind.action} is currently unavailable.`);
    }
  };
}

/** POST /submit/{ACTION} of one kind: answers the task id, then sends the task upstream. */
function submitRoute(authed: FastifyInstance, deps: TaskSurfaceDeps, kind: TaskKind) {
  authed.post(
    `/submit/${kind.action}`,
    {
      schema: {
        body: kind.schema,
        headers: IdempotencyHeaders,
        summary: `Submit a ${kind.action} task of family ${kind.family}`,
        response: { 200: SubmitAnswer },
      },
      ...(kind.closedByDefault ? { preValidation: closedKindGuard(deps, kind) } : {}),
    },
    async (request, reply) => {
      const principal = principalOf(request);
      assertModelAllowed(principal, kind.family);
      // callback_url is the gateway's own field: it never reaches the upstream.
      const { callback_url: callbackUrl, ...body } = request.body as TaskBody & { callback_url?: string };
      let send: (() => Promise<void>) | null = null;
      const answered = await answerIdempotently(deps.idempotency, request, reply, async (run) => {
        const submitted = await submitTask(deps.submit, {
          kind,
          body: body as TaskBody,
          caller: { userId: principal.userId, tokenId: principal.tokenId, group: principal.group },
          callbackUrl: callbackUrl ?? null,
          run,
        });
        send = submitted.send;
        return { status: 200, body: { code: "success", message: SUBMITTED_MESSAGE, data: submitted.taskId } };
      });
      // The answer is out: the send runs now, still inside the handler so a graceful stop waits for it.
      const pending = send as (() => Promise<void>) | null;
      if (pending) await pending().catch((err) => deps.log.warn({ err }, "sending a task after its answer failed"));
      return answered;
    },
  );
}

/** Submit, fetch and callback routes of one family. */
async function familyRoutes(scope: FastifyInstance, deps: TaskSurfaceDeps, family: TaskFamily) {
  const kinds = kindsOf(family);
  await scope.register(async (authed) => {
    authed.addHook("onRequest", deps.authenticate);
    for (const kind of kinds) submitRoute(authed, deps, kind);

    // Not an operation: the answer to an action this family does not have.
    authed.post("/submit/:action", { schema: { hide: true } }, async (request) => {
      const { action } = request.params as { action: string };
      throw new GatewayError(
        "GW_ERR_BAD_REQUEST",
        `Unknown action "${action}" for ${family}; known actions: ${kinds.map((k) => k.action).join(", ")}.`,
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
        const row = await deps.store.getOwned(family, principalOf(request).userId, id);
        if (!row) throw new GatewayError("GW_ERR_NOT_FOUND", `No task ${id} was found.`);
        return { code: "success", message: "", data: renderTaskRecord(row) };
      },
    );

    authed.post(
      "/fetch",
      {
        schema: {
          summary: `Fetch ${family} tasks by id`,
          body: batchFetchSchema(deps.maxBatchFetchIds),
          response: { 200: FetchBatchAnswer },
        },
        serializerCompiler: inDocumentOrder,
      },
      async (request) => {
        const ids = [...new Set((request.body as { ids: string[] }).ids)];
        const rows = await deps.store.listOwned(family, principalOf(request).userId, ids);
        const byId = new Map(rows.map((r) => [r.task_id, r]));
        const records = ids.flatMap((id) => {
          const row = byId.get(id);
          return row ? [renderTaskRecord(row)] : [];
        });
        return { code: "success", message: "", data: records };
      },
    );
  });

  if (FAMILY_SPECS[family].upstreamCallbacks) {
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
        const poked = await deps.store.pokeByCallbackSecret(family, secret);
        if (!poked) throw new GatewayError("GW_ERR_NOT_FOUND", "No running task has this callback address.");
        return { code: "success", message: "", data: null };
      },
    );
  }
}

/** Audio task surface: /audioa/... and /audiob/... (envelope shape). */
export async function taskRoutes(app: FastifyInstance, opts: { deps: TaskSurfaceDeps }) {
  const { deps } = opts;
  for (const family of TASK_FAMILIES) {
    await app.register(
      async (scope) => {
        installSurface(scope, "envelope");
        installInputBounds(scope, deps.bodies);
        await familyRoutes(scope, deps, family);
        await scope.register(taskFileRoutes, { files: deps.files });
      },
      { prefix: `/${family}` },
    );
  }
}
