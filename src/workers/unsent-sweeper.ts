import type { BackgroundService } from "../background-service.js";
import type { GatewayContext } from "../context.js";
import type { TaskStore } from "../store/tasks.js";

const SWEEP_BATCH = 500;

/**
 * Fails and refunds tasks that were charged but never reached the upstream (the process stopped
 * between the charge and the send). A task belongs to its sender until its send deadline
 * (`tasks.unsentGraceMs` after the charge); past it, the compare-and-set from NOT_START decides
 * between a late sender and this sweeper, and the refund commits with the FAILURE.
 */
export class UnsentSweeper implements BackgroundService {
  readonly name = "unsent-task-sweeper";
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<void> | null = null;

  constructor(
    private readonly ctx: GatewayContext,
    private readonly store: TaskStore,
  ) {}

  private intervalMs(): number {
    const { unsentGraceMs, workerTickMs } = this.ctx.config.tasks;
    return Math.max(workerTickMs, Math.min(1000, Math.floor(unsentGraceMs / 4)));
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.current) return;
      this.current = this.sweep()
        .then(() => undefined)
        .finally(() => {
          this.current = null;
        });
    }, this.intervalMs());
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.current;
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
          this.ctx.logger.warn({ taskId: t.task_id }, "task charged but never sent; failed and refunded");
        }
      }
    } catch (err) {
      this.ctx.logger.warn({ err }, "sweeping unsent tasks failed");
    }
    return done;
  }
}
