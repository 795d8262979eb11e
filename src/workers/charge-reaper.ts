import type { FastifyBaseLogger } from "fastify";
import { reapDecision } from "../core/ledger/charge-rules.js";
import type { TaskFailPort, TaskReadPort } from "../core/tasks/ports.js";
import { isTerminal } from "../core/tasks/states.js";
import { PeriodicService } from "../lifecycle/periodic-service.js";
import type { Charges, OverdueCharge } from "../store/charges.js";
import type { Ledger } from "../store/ledger.js";

const REAP_BATCH = 200;

export interface ChargeReaperOptions {
  intervalMs: number;
  /** How long a reaper holds the charges it claimed; a failed closing is retried after it (ms). */
  leaseMs: number;
  instance: string;
}

/**
 * Closes open charges past their close-by time, on any instance (claims are leased, so reapers of
 * several instances share the work): a content or image charge is settled to the usage the
 * gateway recorded on it, else refunded; a task charge closes with its task (a task still running
 * is failed and refunded, as at its timeout). Each closing records why.
 */
export class ChargeReaper extends PeriodicService {
  readonly name = "charge-reaper";

  constructor(
    private readonly charges: Charges,
    private readonly ledger: Ledger,
    private readonly tasks: TaskFailPort & Pick<TaskReadPort, "findOwned">,
    private readonly options: ChargeReaperOptions,
    private readonly log: FastifyBaseLogger,
  ) {
    super();
  }

  protected intervalMs(): number {
    return this.options.intervalMs;
  }

  protected round(): Promise<number> {
    return this.reap(Date.now());
  }

  /**
   * At start: the charges this instance left open in an earlier run (it died or was stopped in
   * the middle of calls) are closed now rather than at their close-by time.
   */
  async recoverLeftOpen(startedAt: number, nowMs = Date.now()): Promise<number> {
    try {
      const left = await this.charges.expireLeftOpen(this.options.instance, startedAt, nowMs);
      if (left === 0) return 0;
      this.log.warn({ charges: left }, "closing charges an earlier run of this instance left open");
      return await this.reap(nowMs);
    } catch (err) {
      this.log.warn({ err }, "closing the charges left open by an earlier run failed; the reaper retries");
      return 0;
    }
  }

  /** One round at time `nowMs`; returns how many charges it closed. */
  async reap(nowMs: number): Promise<number> {
    let closed = 0;
    try {
      const overdue = await this.charges.claimOverdue(nowMs, this.options.leaseMs, REAP_BATCH);
      for (const charge of overdue) {
        try {
          if (await this.close(charge)) closed += 1;
        } catch (err) {
          this.log.warn(
            { err, reference: charge.reference },
            "an overdue charge could not be closed; it is retried after its lease",
          );
        }
      }
    } catch (err) {
      this.log.warn({ err }, "looking for overdue charges failed");
    }
    return closed;
  }

  private async close(charge: OverdueCharge): Promise<boolean> {
    if (charge.reference.startsWith("task:")) return this.closeTaskCharge(charge);
    const decision = reapDecision(charge, "still open at its close-by time");
    const outcome =
      decision.close === "settle"
        ? await this.ledger.settle(charge.reference, decision.amount, decision.reason)
        : await this.ledger.refund(charge.reference, decision.reason);
    if (outcome.applied) {
      this.log.warn(
        {
          reference: charge.reference,
          instance: charge.instance,
          closed: decision.close,
          amount: outcome.amount,
          uncollected: outcome.uncollected,
        },
        `overdue charge closed: ${decision.reason}`,
      );
    }
    return outcome.applied;
  }

  /** A task's charge closes with the task: a task still running past it is failed and refunded. */
  private async closeTaskCharge(charge: OverdueCharge): Promise<boolean> {
    const task = await this.tasks.findOwned(charge.userId, charge.reference.slice("task:".length));
    if (task && !isTerminal(task.status)) {
      const failed = await this.tasks.fail(task.id, task.status, "the task did not end by its charge's close-by time");
      if (failed) this.log.warn({ taskId: task.task_id }, "task still running at its charge's close-by time: failed");
      return failed;
    }
    const outcome =
      task?.status === "SUCCESS"
        ? await this.ledger.settle(charge.reference, charge.held, "the task succeeded")
        : await this.ledger.refund(charge.reference, task ? "the task failed" : "no task has this charge");
    return outcome.applied;
  }
}
