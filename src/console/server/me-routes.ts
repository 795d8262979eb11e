import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import {
  ImageItem,
  MeAnswer,
  PageQuery,
  SpendAnswer,
  SpendQuery,
  TaskIdParams,
  TaskQuery,
} from "../../contracts/console.js";
import { LedgerEntryView } from "../../contracts/records.js";
import { TaskRecordSchema } from "../../contracts/tasks.js";
import { GatewayError } from "../../core/errors.js";
import { unixNow } from "../../core/ids.js";
import { renderTaskRecord } from "../../core/tasks/record.js";
import { shownReference } from "../../core/top-up-reference.js";
import { type ConsoleRouteDeps, ownPage, requireUser } from "./route-deps.js";

const DAY = 86_400;

/** A user's own account, spend, ledger, tasks and images (tokens and webhook: `me-token-routes.ts`). */
export async function consoleMeRoutes(base: FastifyInstance, opts: { deps: ConsoleRouteDeps }) {
  const { deps } = opts;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const me = async (userId: number) => {
    const user = await deps.users.get(userId);
    if (!user) throw new GatewayError("GW_ERR_NOT_FOUND", "The account no longer exists.");
    return user;
  };

  app.get(
    "/me",
    { schema: { summary: "The signed-in user's account", response: { 200: MeAnswer } } },
    async (request) => {
      const user = await me((await requireUser(deps, request)).subjectId);
      return {
        id: Number(user.id),
        name: user.name,
        email: user.email ?? null,
        quota: Number(user.quota),
        used_quota: Number(user.used_quota),
        credit_line: Number(user.credit_line),
        status: user.status,
        webhook_url: user.webhook_url,
      };
    },
  );

  app.get(
    "/me/spend",
    {
      schema: {
        summary: "The user's spend per day over the last days, by model",
        querystring: SpendQuery,
        response: { 200: SpendAnswer },
      },
    },
    async (request) => {
      const session = await requireUser(deps, request);
      const days = request.query.days === undefined ? 30 : Number(request.query.days);
      if (days < 1 || days > 366) {
        throw new GatewayError("GW_ERR_VALIDATION", "querystring.days must be from 1 to 366", { param: "days" });
      }
      const today = unixNow() - (unixNow() % DAY);
      const since = today - (days - 1) * DAY;
      const rows = await deps.console.reads.spend(session.subjectId, since);
      const buckets = Array.from({ length: days }, (_, i) => ({
        start: since + i * DAY,
        spend: 0,
        series: {} as Record<string, number>,
      }));
      for (const row of rows) {
        const bucket = buckets[Math.floor((row.start - since) / DAY)];
        if (!bucket) continue;
        bucket.spend += row.spend;
        bucket.series[row.model] = (bucket.series[row.model] ?? 0) + row.spend;
      }
      return { buckets };
    },
  );

  app.get(
    "/me/ledger",
    {
      schema: {
        summary: "The user's ledger, newest first",
        querystring: PageQuery,
        response: { 200: Type.Array(LedgerEntryView) },
      },
    },
    async (request) => {
      const { userId, limit, after } = await ownPage(deps, request, request.query);
      const rows = await deps.ledger.entries(userId, { limit, beforeId: after });
      return rows.map((r) => ({
        id: Number(r.id),
        user_id: Number(r.user_id),
        token_id: r.token_id === null ? null : Number(r.token_id),
        kind: r.kind as "charge",
        amount: Number(r.amount),
        reference: shownReference(r),
        note: r.note,
        created_at: Number(r.created_at),
      }));
    },
  );

  app.get(
    "/me/tasks",
    {
      schema: {
        summary: "The user's tasks, newest first (the public task record)",
        querystring: TaskQuery,
        response: { 200: Type.Array(TaskRecordSchema) },
      },
    },
    async (request) => {
      const { userId, ...page } = await ownPage(deps, request, request.query);
      const { platform, status } = request.query;
      const rows = await deps.console.reads.ownTasks(userId, { platform, status, ...page });
      return rows.map((r) => renderTaskRecord(r));
    },
  );

  app.get(
    "/me/tasks/:task_id",
    {
      schema: {
        summary: "One of the user's tasks; another user's is not found",
        params: TaskIdParams,
        response: { 200: TaskRecordSchema },
      },
    },
    async (request) => {
      const session = await requireUser(deps, request);
      const row = await deps.console.reads.ownTask(session.subjectId, request.params.task_id);
      if (!row) throw new GatewayError("GW_ERR_NOT_FOUND", `No task ${request.params.task_id} was found.`);
      return renderTaskRecord(row);
    },
  );

  app.get(
    "/me/images",
    {
      schema: {
        summary: "The images the user generated (delivered as URLs), newest first",
        querystring: PageQuery,
        response: { 200: Type.Array(ImageItem) },
      },
    },
    async (request) => {
      const { userId, limit, after } = await ownPage(deps, request, request.query);
      const rows = await deps.userImages.list(userId, { limit, before: after });
      return rows.map((r) => ({ id: Number(r.id), created_at: Number(r.created_at), model: r.model, url: r.url }));
    },
  );
}
