import type { GatewayContext } from "../context.js";

/** Registers the task pollers and sweepers as background services of the gateway. */
export function registerTaskServices(_ctx: GatewayContext): void {}
