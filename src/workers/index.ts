import type { GatewayContext } from "../context.js";
import { TaskStore } from "../store/tasks.js";
import { TaskPoller } from "./task-poller.js";
import { UnsentSweeper } from "./unsent-sweeper.js";

/** Registers the task pollers and sweepers as background services of the gateway. */
export function registerTaskServices(ctx: GatewayContext): void {
  const store = new TaskStore(ctx.store.db, ctx.ledger, ctx.store.dialect);
  ctx.addService(new TaskPoller(ctx, store));
  ctx.addService(new UnsentSweeper(ctx, store));
}
