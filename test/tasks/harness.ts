import type { ConfigOverrides } from "../../src/config/load.js";
import { findKind, type TaskKind } from "../../src/core/tasks/kinds.js";
import { type Simulator, type SimulatorOptions, startSimulator } from "../../src/simulator/server.js";
import { TaskStore } from "../../src/store/tasks.js";
import { taskSubmitPorts } from "../../src/wiring/task-ports.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";

/** Short poll timings so tests end quickly (no assertion depends on them). */
export const FAST_TASKS: ConfigOverrides = {
  logLevel: "warn",
  tasks: { pollIntervalMs: 50, maxPollIntervalMs: 400, workerTickMs: 20 },
};

export interface TaskEnv {
  gw: TestGateway;
  sim: Simulator;
  relayChannelId: number;
  recordChannelId: number;
  close(): Promise<void>;
}

function mergeOverrides(a: ConfigOverrides, b: ConfigOverrides): ConfigOverrides {
  return { ...a, ...b, tasks: { ...a.tasks, ...b.tasks } };
}

/** A simulator and a gateway with one channel per family pointing at it. */
export async function startTaskEnv(
  kind: StoreKind,
  options: { sim?: SimulatorOptions; config?: ConfigOverrides } = {},
): Promise<TaskEnv> {
  const sim = await startSimulator({ seed: 7, keys: ["sim-key"], ...options.sim });
  const gw = await startTestGateway(kind, mergeOverrides(FAST_TASKS, options.config ?? {}));
  const relayChannelId = await gw.createChannel({ type: "task-relay", baseUrl: sim.url, models: ["audioa"] });
  const recordChannelId = await gw.createChannel({ type: "generate-record", baseUrl: sim.url, models: ["audiob"] });
  return {
    gw,
    sim,
    relayChannelId,
    recordChannelId,
    async close() {
      await gw.close();
      await sim.close();
    },
  };
}

export interface Answer {
  status: number;
  body: any;
}

/** One call of the task surface with a bearer token. */
export async function call(
  url: string,
  key: string | null,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
  rawBody?: string,
): Promise<Answer> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body !== undefined || rawBody !== undefined ? { "content-type": "application/json" } : {}),
    },
    body: rawBody ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

export function submit(url: string, key: string, family: string, action: string, body: unknown) {
  return call(url, key, "POST", `/${family}/submit/${action}`, body);
}

export async function fetchTask(url: string, key: string, family: string, taskId: string): Promise<Answer> {
  return call(url, key, "GET", `/${family}/fetch/${taskId}`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Fetches a task until `done(record)` holds; fails after `limitMs` (a guard, not a timing check). */
export async function waitForTask(
  url: string,
  key: string,
  family: string,
  taskId: string,
  done: (record: any) => boolean = (r) => r.status === "SUCCESS" || r.status === "FAILURE",
  limitMs = 20_000,
): Promise<any> {
  const until = Date.now() + limitMs;
  let last: any = null;
  while (Date.now() < until) {
    const res = await fetchTask(url, key, family, taskId);
    if (res.status !== 200) throw new Error(`fetch ${taskId}: ${res.status} ${JSON.stringify(res.body)}`);
    last = res.body.data;
    if (done(last)) return last;
    await sleep(25);
  }
  throw new Error(`task ${taskId} did not reach the expected state; last: ${JSON.stringify(last)}`);
}

/** Waits until `check()` holds; fails after `limitMs`. */
export async function eventually<T>(check: () => Promise<T | null | undefined | false>, limitMs = 20_000): Promise<T> {
  const until = Date.now() + limitMs;
  while (Date.now() < until) {
    const v = await check();
    if (v) return v;
    await sleep(25);
  }
  throw new Error("condition not reached in time");
}

/** The ledger rows of one task reference. */
export async function ledgerRowsOf(gw: TestGateway, userId: number, taskId: string) {
  const rows = await gw.gateway.ctx.ledger.entries(userId, { limit: 1000 });
  return rows.filter((r) => r.reference === `task:${taskId}`).map((r) => ({ kind: r.kind, amount: Number(r.amount) }));
}

/** The submit use case's ports over the gateway's own parts, for tests that drive it step by step. */
export function submitPortsOf(gw: TestGateway) {
  const ctx = gw.gateway.ctx;
  const store = new TaskStore(ctx.store.db, ctx.ledger, ctx.store.dialect);
  return { store, deps: taskSubmitPorts(ctx, store) };
}

/** The registry's kind of a family's action (it must exist). */
export function kindOf(family: string, action: string): TaskKind {
  const kind = findKind(family, action);
  if (!kind) throw new Error(`no kind ${family}:${action}`);
  return kind;
}

/** The caller of a user's key, as the submit use case takes it. */
export async function callerOf(gw: TestGateway, key: string) {
  const p = await gw.gateway.ctx.auth.authenticate(key, "127.0.0.1");
  return { userId: p.userId, tokenId: p.tokenId, group: p.group };
}

/** The task's row once its send is over (the send follows the submit's answer). */
export async function sentRow(gw: TestGateway, taskId: string) {
  return eventually(async () => {
    const row = await gw.gateway.ctx.store.db
      .selectFrom("tasks")
      .selectAll()
      .where("task_id", "=", taskId)
      .executeTakeFirstOrThrow();
    return row.status === "NOT_START" ? null : row;
  });
}
