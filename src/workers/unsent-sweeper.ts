import type { TaskLog, TaskPollPort } from "../core/tasks/ports.js";
import { PeriodicService } from "../lifecycle/periodic-service.js";

const SWEEP_BATCH = 500;

/**
 * Fails and refunds tasks that were charged but never reached the upstream (the process stopped
 * between the charge and the send). A task belongs to its sender until its send deadline
 * (`tasks.unsentGraceMs` after the charge); past it, the compare-and-set from NOT_START decides
 * between a late sender and this sweeper, and the refund commits with the FAILURE.
 */
export class UnsentSweeper extends PeriodicService {
  readonly name = "unsent-task-sweeper";

  constructor(
    private readonly store: Pick<TaskPollPort, "unsentOverdue" | "fail">,
    private readonly settings: { unsentGraceMs: number; workerTickMs: number },
    private readonly log: TaskLog,
  ) {
    super();
  }

  protected round(): Promise<number> {
    return this.sweep();
  }

  protected intervalMs(): number {
    const { unsentGraceMs, workerTickMs } = this.settings;
    return Math.max(workerTickMs, Math.min(1000, Math.floor(unsentGraceMs / 4)));
  }

  /** One pass; returns how many tasks this pass failed and refunded. */
  async sweep(): Promise<number> {
    let done = 0;
    try {
      const overdue = await this.store.unsentOverdue(Date.now(), SWEEP_BATCH);
      for (const t of overdue) {
        const failed = await this.store.fail(t.id, "NOT_START", "the task was not sent to the upstream in time");
        if (failed) {
          done += 1;
          this.log.warn({ taskId: t.task_id }, "task charged but never sent; failed and refunded");
        }
      }
    } catch (err) {
      this.log.warn({ err }, "sweeping unsent tasks failed");
    }
    return done;
  }
}
