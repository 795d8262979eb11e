import type { Channel } from "../channel.js";
import { orderChannels } from "../channel-selection.js";
import { deadline } from "../deadline-signal.js";
import { GatewayError } from "../errors.js";
import { withFailover } from "../failover.js";
import { quotaForCall } from "../pricing.js";
import { isUpstreamError, publicUpstreamReason, UpstreamError } from "../upstream-error.js";
import { FAMILY_SPECS } from "./families.js";
import { kindName, type TaskKind } from "./kinds.js";
import type { BroughtIn, StoredTask, TaskAttachment, TaskCaller, TaskIntake, TaskSubmitDeps } from "./ports.js";
import { ownedSourceClip, type SourceClip } from "./source-clip.js";
import type { TaskBody } from "./task-kind.js";

/** One submit: which kind, the body (without the gateway's own fields), who asks. */
export interface SubmitRequest {
  kind: TaskKind;
  body: TaskBody;
  caller: TaskCaller;
  /** Where the task's end is announced (checked here); null = the user's default webhook. */
  callbackUrl?: string | null;
  /** The Idempotency-Key run this submit belongs to, if any: it names the task. */
  run?: { runId: string; attempt: number } | null;
  /** A file sent with the task (a video's reference image): held in memory until the send. */
  attachment?: TaskAttachment | null;
  /**
   * A file the request names by URL, brought in once the hold is taken (a video's reference image
   * by URL). A kind with an `intakeField` (UPLOAD) has its own, over the deps' file intake.
   */
  intake?: TaskIntake | null;
  /** The task continues an earlier upstream job (a remix): only that job's channel can take it. */
  continues?: { channelId: number; upstreamId: string } | null;
}

/** A task charged and stored, not yet sent. */
export interface AcceptedTask {
  row: StoredTask;
  kind: TaskKind;
  body: TaskBody;
  /** Channels to try, in order; the first is the one the task was priced on. */
  channels: Channel[];
  originModel: string;
  /** The caller's clip the task works on, if its kind has one. */
  source: SourceClip | null;
  /** The text shown as `properties.input` (from the client's body). */
  input: string;
  attachment: TaskAttachment | null;
  /** The upstream id of the job this task continues, if any. */
  continues: string | null;
}

/** What a submit answers: the public id now, and the send to run once the answer is out. */
export interface SubmittedTask {
  taskId: string;
  /** Sends the task upstream; null when an earlier run of the same Idempotency-Key made the task. */
  send: (() => Promise<void>) | null;
}

/** Most channels one submit tries before it gives up. */
const MAX_SUBMIT_ATTEMPTS = 3;

function upstreamModelOf(channel: Channel, originModel: string): string {
  return channel.modelMapping[originModel] ?? originModel;
}

function propertiesJson(input: string, origin: string, upstream: string): string {
  return JSON.stringify({ input, upstream_model_name: upstream, origin_model_name: origin });
}

/**
 * The intake of a kind that brings a file in (UPLOAD): the client's URL fetched, checked and
 * stored, and replaced in the body by the gateway's URL of the stored copy.
 */
function kindIntake(deps: TaskSubmitDeps, kind: TaskKind): TaskIntake | null {
  const field = kind.intakeField;
  if (!field) return null;
  return {
    timeoutMs: deps.intake.timeoutMs,
    async bringIn(body) {
      const url = String((body as Record<string, unknown>)[field]);
      const stored = await deps.intake.bringIn(url, field, kind.family);
      return { body: { ...body, [field]: stored.url } as TaskBody, attachment: null, discard: stored.discard };
    },
  };
}

/** Takes back a task whose submit fails after its hold: its row goes and its charge is refunded. */
async function withdraw(deps: TaskSubmitDeps, row: StoredTask, err: unknown): Promise<void> {
  const reason = err instanceof GatewayError ? err.message : "the task's file could not be brought in";
  try {
    await deps.store.withdraw(row.id, reason);
  } catch (withdrawErr) {
    // The unsent-task sweeper fails and refunds it after its send deadline.
    deps.log.error({ err: withdrawErr, taskId: row.task_id }, "a task refused after its hold could not be withdrawn");
  }
}

/**
 * Brings in the request's file now that the hold is taken, and records the body that names it.
 * A failure withdraws the task (refunding its hold once) and leaves nothing stored.
 */
async function bringInAfterHold(deps: TaskSubmitDeps, row: StoredTask, intake: TaskIntake, body: TaskBody) {
  let brought: BroughtIn;
  try {
    brought = await intake.bringIn(body);
  } catch (err) {
    await withdraw(deps, row, err);
    throw err;
  }
  let recorded: boolean;
  try {
    // Recorded before the send: the record shows, and a poll may read, what the upstream was sent.
    recorded = await deps.store.recordBody(row.id, JSON.stringify(brought.body));
  } catch (err) {
    await brought.discard();
    await withdraw(deps, row, err);
    throw err;
  }
  if (!recorded) {
    // The sweeper ended the task (and refunded it) while its file was being brought in.
    await brought.discard();
    throw new GatewayError(
      "GW_ERR_BUSY",
      "The task's file took too long to bring in; its charge was refunded. Retry.",
      {
        headers: { "retry-after": "5" },
      },
    );
  }
  return brought;
}

/**
 * Validates, prices and charges a task, and stores it as NOT_START, in one transaction; only then
 * brings in a file the request names by URL (fetched, checked, stored). Nothing is charged when a
 * check fails (insufficient quota included), nothing is fetched or stored before the hold, a file
 * that cannot be used withdraws the task with its hold refunded, and no upstream is called.
 */
export async function acceptTask(deps: TaskSubmitDeps, req: SubmitRequest): Promise<AcceptedTask> {
  const { kind, body, caller } = req;
  kind.check(body);
  const callbackUrl = req.callbackUrl ? await deps.checkCallbackUrl(req.callbackUrl, "body.callback_url") : null;
  const source = await ownedSourceClip(
    (platform, userId, clipId) => deps.store.findOwnedClip(platform, userId, clipId),
    kind,
    caller.userId,
    body,
  );
  const pricing = kind.pricing?.(body) ?? { name: kind.action, units: 1, field: "" };
  const price = await deps.prices.taskPrice(kind.family, pricing.name);
  if (price === null && kind.pricing) {
    throw new GatewayError("GW_ERR_VALIDATION", `${pricing.field} ${pricing.name} is not a known model`, {
      param: pricing.field,
    });
  }
  if (price === null) {
    throw new GatewayError(
      "GW_ERR_ACTION_UNAVAILABLE",
      `The action ${kind.action} of ${kind.family} has no price set; it is currently unavailable.`,
    );
  }
  const spec = FAMILY_SPECS[kind.family];
  const model = kind.channelModel?.(body) ?? kind.family;
  // Only channels whose protocol can do this kind (and, for a continued job, only its channel).
  const candidates = (await deps.channels.candidates(model, caller.group, kindName(kind))).filter(
    (c) =>
      deps.upstreams(c.type)?.kinds.includes(kindName(kind)) && (!req.continues || c.id === req.continues.channelId),
  );
  if (candidates.length === 0) {
    throw new GatewayError("GW_ERR_NO_CHANNEL", `No upstream channel serves ${model} for your group.`);
  }
  const channels = orderChannels(candidates);
  const first = channels[0] as Channel;
  const quota = quotaForCall(price * pricing.units, {
    groupRatio: await deps.prices.groupRatio(caller.group),
    channelRatio: first.priceRatio,
    quotaPerUnit: deps.settings.quotaPerUnit,
  });
  const originModel = kind.originModel(body, source?.model ?? "");
  const intake = req.intake ?? kindIntake(deps, kind);
  const { settings } = deps;
  const now = deps.now();
  const row = await deps.store
    .insertCharged({
      taskId: req.run ? deps.ids.taskIdOfRun(req.run.runId, spec.idPrefix) : deps.ids.newTaskId(spec.idPrefix),
      platform: kind.family,
      userId: caller.userId,
      tokenId: caller.tokenId,
      group: caller.group,
      channelId: first.id,
      quota,
      action: kind.action,
      properties: propertiesJson(kind.input(body), originModel, upstreamModelOf(first, originModel)),
      requestBody: JSON.stringify(body),
      callbackSecret: spec.upstreamCallbacks ? deps.ids.secret() : null,
      callbackUrl,
      // The sender owns the task while its file is brought in, then for the usual grace.
      sendDeadlineMs: now + settings.unsentGraceMs + (intake?.timeoutMs ?? 0),
      // Counted in the store, with the insert: it holds across instances and parallel submits.
      unfinishedLimit: settings.tasksInFlightPerUser,
      // The task's timeout ends it (and closes its charge) first; the reaper is the backstop.
      chargeCloseBy: now + settings.timeoutSeconds * 1000 + 2 * settings.leaseMs,
    })
    .catch((err: unknown) => {
      if (err instanceof GatewayError && err.errorName === "GW_ERR_RATE_LIMITED") deps.onRateLimited();
      throw err;
    });
  const brought = intake ? await bringInAfterHold(deps, row, intake, body) : null;
  return {
    row,
    kind,
    body: brought?.body ?? body,
    channels,
    originModel,
    source,
    input: kind.input(body),
    attachment: brought?.attachment ?? req.attachment ?? null,
    continues: req.continues?.upstreamId ?? null,
  };
}

function failReason(err: unknown): string {
  if (!isUpstreamError(err)) return "the task could not be submitted";
  if (err.kind === "refused") return publicUpstreamReason(err.message);
  return `no upstream channel accepted the task: ${publicUpstreamReason(err.message)}`;
}

/**
 * Sends an accepted task upstream, failing over across its channels, each call in one of the
 * channel's slots, and moves it to SUBMITTED. When no channel takes it the task ends as FAILURE
 * with the upstream's reason and its refund (one transaction, its webhook queued with it). Never
 * throws: the client already has the task's id and learns the outcome from the record.
 */
export async function sendTask(deps: TaskSubmitDeps, task: AcceptedTask): Promise<void> {
  const { row, kind, body, originModel, source, attachment, continues } = task;
  // The whole send must end well before the sweeper may take the task as "never sent".
  const sendLimit = deadline(Math.max(100, Math.floor(deps.settings.unsentGraceMs * 0.8)));
  const signal = sendLimit.signal;
  const callbackUrl = row.callback_secret ? deps.upstreamCallbackUrl(row.platform, row.callback_secret) : null;
  try {
    const { result: upstreamId, channel } = await withFailover(
      task.channels,
      { maxAttempts: MAX_SUBMIT_ATTEMPTS },
      async (channel, index) => {
        const upstream = deps.upstreams(channel.type);
        if (!upstream) throw new UpstreamError("retryable", `channel type ${channel.type} sends no tasks`);
        const upstreamModel = upstreamModelOf(channel, originModel);
        if (index > 0) {
          await deps.store.switchChannel(row.id, channel.id, propertiesJson(task.input, originModel, upstreamModel));
        }
        const concurrency = channel.settings.concurrency ?? upstream.defaultConcurrency;
        const release = await deps.slots.acquire({ id: channel.id, settings: { concurrency } });
        try {
          const outgoing = { kind, body, upstreamModel, callbackUrl, source, attachment, continues };
          return await upstream.submit(channel, outgoing, signal);
        } finally {
          release();
        }
      },
      ({ channel, error }) => deps.channels.report(channel, error, Number(row.user_id)),
    );
    const sent = await deps.store.markSent(row.id, upstreamId, channel.id, deps.now() + deps.settings.pollIntervalMs);
    if (!sent) {
      // The sweeper failed and refunded the task while it was being sent: the upstream job runs unpaid.
      deps.log.error({ taskId: row.task_id, channelId: channel.id }, "task was sent after it had been swept");
    }
  } catch (err) {
    deps.log.warn({ err, taskId: row.task_id }, "task submit failed; refunding");
    try {
      await deps.store.fail(row.id, "NOT_START", failReason(err));
    } catch (failErr) {
      // The unsent-task sweeper fails and refunds it after its send deadline.
      deps.log.error({ err: failErr, taskId: row.task_id }, "a refused task could not be failed now");
    }
  } finally {
    sendLimit.clear();
  }
}

/**
 * Accepts a task and hands back its public id and its send: the client is answered once the task
 * and its charge are committed, and the send runs after the answer. A retry that took over an
 * Idempotency-Key from a dead instance answers the task that instance created, if it got that far
 * (its charge and insert are one transaction): never a second task or charge.
 */
export async function submitTask(deps: TaskSubmitDeps, req: SubmitRequest): Promise<SubmittedTask> {
  if (req.run && req.run.attempt > 1) {
    const prefix = FAMILY_SPECS[req.kind.family].idPrefix;
    const earlier = await deps.store.getOwned(
      req.kind.family,
      req.caller.userId,
      deps.ids.taskIdOfRun(req.run.runId, prefix),
    );
    if (earlier) return { taskId: earlier.task_id, send: null };
  }
  const accepted = await acceptTask(deps, req);
  return { taskId: accepted.row.task_id, send: () => sendTask(deps, accepted) };
}
