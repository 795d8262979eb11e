import { assertModelAllowed, type Principal } from "../../auth/authenticator.js";
import type { GatewayContext } from "../../context.js";
import type { Channel } from "../../core/channel.js";
import { orderChannels } from "../../core/channel-selection.js";
import { GatewayError } from "../../core/errors.js";
import { withFailover } from "../../core/failover.js";
import { newTaskId, randomBase62, taskIdOfRun } from "../../core/ids.js";
import { quotaForCall } from "../../core/pricing.js";
import { FAMILY_SPECS, type TaskFamily } from "../../core/tasks/families.js";
import {
  type AudiobMusicBody,
  checkTaskBody,
  inputOf,
  originModelOf,
  type ReplaceBody,
  recordRequestBody,
  relayRequestBody,
  type TaskBody,
} from "../../core/tasks/request-bodies.js";
import { isUpstreamError, publicUpstreamReason } from "../../core/upstream-error.js";
import type { IdempotentRun } from "../../idempotency/idempotency-keys.js";
import { countUpstreamCall } from "../../metrics/index.js";
import type { TaskRow, TaskStore } from "../../store/tasks.js";
import { submitRecordTask } from "../../upstreams/generate-record/index.js";
import { submitRelayTask } from "../../upstreams/task-relay/index.js";
import { assertWebhookTarget } from "../../webhooks/target.js";

export interface SubmitRequest {
  family: TaskFamily;
  action: string;
  body: TaskBody;
  principal: Principal;
  /** Where the task's end is announced (checked here); null = the user's default webhook. */
  callbackUrl?: string | null;
  /** The Idempotency-Key run this submit belongs to, if any: it names the task. */
  run?: IdempotentRun | null;
}

/** A task charged and stored, not yet sent. */
export interface AcceptedTask {
  row: TaskRow;
  family: TaskFamily;
  action: string;
  body: TaskBody;
  /** Channels to try, in order; the first is the one the task was priced on. */
  channels: Channel[];
  originModel: string;
}

/** Most channels one submit tries before it gives up. */
const MAX_SUBMIT_ATTEMPTS = 3;

function upstreamModelOf(channel: Channel, originModel: string): string {
  return channel.modelMapping[originModel] ?? originModel;
}

function propertiesJson(family: TaskFamily, action: string, body: TaskBody, origin: string, upstream: string) {
  return JSON.stringify({
    input: inputOf(family, action, body),
    upstream_model_name: upstream,
    origin_model_name: origin,
  });
}

/**
 * Validates, prices and charges a task, and stores it as NOT_START, in one transaction. Nothing
 * is charged when any check fails (insufficient quota included), and no upstream is called.
 */
export async function acceptTask(ctx: GatewayContext, store: TaskStore, req: SubmitRequest): Promise<AcceptedTask> {
  const { family, action, body, principal } = req;
  assertModelAllowed(principal, family);
  checkTaskBody(family, action, body);
  const callbackUrl = req.callbackUrl
    ? await assertWebhookTarget(
        req.callbackUrl,
        { allowPrivate: ctx.config.webhooks.allowPrivateUrls },
        "body.callback_url",
      )
    : null;

  let sourceModel = "";
  if (action === "REPLACE" || action === "INSTRUMENTALS_SWAP") {
    const clipId = (body as ReplaceBody).clip_id;
    const clip = await store.findOwnedClip(family, principal.userId, clipId);
    if (!clip) {
      throw new GatewayError(
        "GW_ERR_VALIDATION",
        `body.clip_id ${clipId} is not a clip of one of your succeeded ${family} tasks`,
        {
          param: "clip_id",
        },
      );
    }
    sourceModel = clip.model;
  }

  const price = await ctx.prices.taskPrice(family, action);
  if (price === null) {
    throw new GatewayError(
      "GW_ERR_ACTION_UNAVAILABLE",
      `The action ${action} of ${family} has no price set; it is currently unavailable.`,
    );
  }
  const spec = FAMILY_SPECS[family];
  const candidates = await ctx.channels.candidates(family, principal.group, [spec.channelType]);
  if (candidates.length === 0) {
    throw new GatewayError("GW_ERR_NO_CHANNEL", `No upstream channel serves ${family} for your group.`);
  }
  const channels = orderChannels(candidates);
  const first = channels[0] as Channel;
  const quota = quotaForCall(price, {
    groupRatio: await ctx.prices.groupRatio(principal.group),
    channelRatio: first.priceRatio,
    quotaPerUnit: ctx.config.quotaPerUnit,
  });
  const originModel = originModelOf(family, action, body, sourceModel);
  const row = await store
    .insertCharged({
      taskId: req.run ? taskIdOfRun(req.run.runId) : newTaskId(),
      platform: family,
      userId: principal.userId,
      tokenId: principal.tokenId,
      group: principal.group,
      channelId: first.id,
      quota,
      action,
      properties: propertiesJson(family, action, body, originModel, upstreamModelOf(first, originModel)),
      requestBody: JSON.stringify(body),
      callbackSecret: family === "audiob" ? randomBase62(32) : null,
      callbackUrl,
      sendDeadlineMs: Date.now() + ctx.config.tasks.unsentGraceMs,
      // Counted in the store, with the insert: it holds across instances and parallel submits.
      unfinishedLimit: ctx.config.limits.tasksInFlightPerUser,
      // The task's timeout ends it (and closes its charge) first; the reaper is the backstop.
      chargeCloseBy: Date.now() + ctx.config.tasks.timeoutSeconds * 1000 + 2 * ctx.config.tasks.leaseMs,
    })
    .catch((err: unknown) => {
      if (err instanceof GatewayError && err.errorName === "GW_ERR_RATE_LIMITED") {
        ctx.metrics.rateLimited.inc({ surface: "tasks" });
      }
      throw err;
    });
  return { row, family, action, body, channels, originModel };
}

function callbackUrl(ctx: GatewayContext, row: TaskRow): string | null {
  return row.callback_secret ? `${ctx.publicBaseUrl()}/${row.platform}/callback/${row.callback_secret}` : null;
}

/**
 * Sends an accepted task upstream, failing over across its channels, and moves it to SUBMITTED.
 * When no channel takes it the task ends as FAILURE with its refund (one transaction) and a
 * GatewayError tells the caller why: 400 for a refusal, 502 when every channel failed.
 */
export async function sendTask(ctx: GatewayContext, store: TaskStore, task: AcceptedTask): Promise<void> {
  const { row, family, action, body, originModel } = task;
  // The whole send must end well before the sweeper may take the task as "never sent".
  const signal = AbortSignal.timeout(Math.max(100, Math.floor(ctx.config.tasks.unsentGraceMs * 0.8)));
  try {
    const { result: upstreamId, channel } = await withFailover(
      task.channels,
      { maxAttempts: MAX_SUBMIT_ATTEMPTS },
      async (channel, index) => {
        const upstreamModel = upstreamModelOf(channel, originModel);
        if (index > 0) {
          await store.switchChannel(
            row.id,
            channel.id,
            propertiesJson(family, action, body, originModel, upstreamModel),
          );
        }
        if (family === "audioa") {
          return submitRelayTask(channel, family, action, relayRequestBody(action, body, upstreamModel), signal);
        }
        return submitRecordTask(
          channel,
          recordRequestBody(body as AudiobMusicBody, upstreamModel, callbackUrl(ctx, row)),
          signal,
        );
      },
      ({ channel, error }) => {
        countUpstreamCall(ctx.metrics, channel, error);
        void ctx.health.report(channel, error, `user:${row.user_id}`);
      },
    );
    const sent = await store.markSent(row.id, upstreamId, channel.id, Date.now() + ctx.config.tasks.pollIntervalMs);
    if (!sent) {
      // The sweeper failed and refunded the task while it was being sent: the upstream job runs unpaid.
      ctx.logger.error({ taskId: row.task_id, channelId: channel.id }, "task was sent after it had been swept");
      throw new GatewayError("GW_ERR_UPSTREAM", "The task could not be submitted in time; it was not charged.");
    }
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    const reason = isUpstreamError(err)
      ? err.kind === "refused"
        ? publicUpstreamReason(err.message)
        : `no upstream channel accepted the task: ${publicUpstreamReason(err.message)}`
      : "the task could not be submitted";
    ctx.logger.warn({ err, taskId: row.task_id }, "task submit failed; refunding");
    await store.fail(row.id, "NOT_START", reason);
    if (isUpstreamError(err) && err.kind === "refused") {
      // A 400 (the request was refused), with the upstream code so it is told apart from our own checks.
      throw new GatewayError("GW_ERR_UPSTREAM", `The task was not accepted (${reason}); it was not charged.`, {
        status: 400,
      });
    }
    if (isUpstreamError(err)) {
      throw new GatewayError("GW_ERR_UPSTREAM", "No upstream channel accepted the task; it was not charged.");
    }
    throw err;
  }
}

/**
 * Accept then send: what the submit endpoints do. Returns the public task id. A retry that took
 * over an Idempotency-Key from a dead instance answers the task that instance created, if it
 * got that far (its charge and insert are one transaction): never a second task or charge.
 */
export async function submitTask(ctx: GatewayContext, store: TaskStore, req: SubmitRequest): Promise<string> {
  if (req.run && req.run.attempt > 1) {
    const earlier = await store.getOwned(req.family, req.principal.userId, taskIdOfRun(req.run.runId));
    if (earlier) return earlier.task_id;
  }
  const accepted = await acceptTask(ctx, store, req);
  await sendTask(ctx, store, accepted);
  return accepted.row.task_id;
}
