import type { GatewayContext } from "../context.js";
import { Charges } from "../store/charges.js";
import { TaskStore } from "../store/tasks.js";
import { ChargeReaper } from "./charge-reaper.js";
import { TaskPoller } from "./task-poller.js";
import { UnsentSweeper } from "./unsent-sweeper.js";

/**
 * Registers the task pollers and sweepers and the charge reaper as background services of the
 * gateway; returns the reaper (every role runs its start-up recovery).
 */
export function registerTaskServices(ctx: GatewayContext): ChargeReaper {
  const store = new TaskStore(ctx.store.db, ctx.ledger, ctx.store.dialect);
  ctx.addService(new TaskPoller(ctx, store));
  ctx.addService(new UnsentSweeper(ctx, store));
  const reaper = new ChargeReaper(
    new Charges(ctx.store.db, ctx.store.dialect),
    ctx.ledger,
    store,
    {
      intervalMs: ctx.config.charges.reapIntervalMs,
      leaseMs: Math.max(1000, ctx.config.charges.reapIntervalMs * 4),
      instance: ctx.config.instanceName,
    },
    ctx.logger,
  );
  ctx.addService(reaper);
  return reaper;
}
