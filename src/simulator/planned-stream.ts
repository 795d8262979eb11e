import type { ServerResponse } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { GeminiTextSimOptions } from "./options.js";
import type { ReceivedRequest, SimulatorState } from "./state.js";

/** What a simulated text answer will do, decided from its prompt's markers or else the options. */
export interface Plan {
  chunks: number;
  delayMs: number;
  status: number | null;
  cutAfter: number | null;
  truncateAfter: number | null;
  errorAfter: number | null;
  blocked: boolean;
  thoughts: number;
  cached: number;
  noUsage: boolean;
}

/** The plan of one answer: `[chunks=N]`, `[slow]`, `[429]`, `[cut]`, `[truncate]`, `[error-event]`... */
export function planFor(options: GeminiTextSimOptions, prompt: string): Plan {
  const chunksMarker = /\[chunks=(\d+)\]/.exec(prompt);
  const chunks = Math.max(1, Number(chunksMarker?.[1] ?? options.chunks ?? 3));
  const midway = Math.max(1, Math.floor(chunks / 2));
  const statusMarker = /\[(429|500|503)\]/.exec(prompt);
  return {
    chunks,
    delayMs: options.chunkDelayMs ?? (prompt.includes("[slow]") ? 200 : 0),
    status: statusMarker ? Number(statusMarker[1]) : (options.status ?? null),
    cutAfter: prompt.includes("[cut]") ? midway : (options.failAfterChunks ?? null),
    truncateAfter: prompt.includes("[truncate]") ? midway : (options.truncateAfterChunks ?? null),
    errorAfter: prompt.includes("[error-event]") ? midway : (options.errorAfterChunks ?? null),
    blocked: prompt.includes("[blocked]") || options.blocked === true,
    thoughts: prompt.includes("[thoughts]") ? 16 : (options.thoughtsTokens ?? 0),
    cached: prompt.includes("[cached]") ? 8 : (options.cachedTokens ?? 0),
    noUsage: prompt.includes("[nousage]") || options.noUsage === true,
  };
}

/** Writes `text`, then waits while the client's buffer is full (until it drains or closes). */
export function writeAndWait(raw: ServerResponse, text: string): Promise<void> {
  if (raw.destroyed) return Promise.resolve();
  if (raw.write(text)) return Promise.resolve();
  return new Promise((resolve) => {
    raw.once("drain", resolve);
    raw.once("close", resolve);
  });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One simulated answer as the fault plan may cut it: the received request is marked aborted when
 * the client goes away before the answer's end, unless the simulator cut it on purpose.
 */
export class PlannedAnswer {
  /** Set once the simulator cuts the connection itself. */
  cutting = false;

  constructor(
    private readonly reply: FastifyReply,
    entry: ReceivedRequest,
  ) {
    reply.raw.once("close", () => {
      if (!reply.raw.writableFinished && !this.cutting) entry.aborted = true;
    });
  }

  /** Records a request of a text protocol (`path`: as the log shows it) and watches its answer. */
  static received(
    state: SimulatorState,
    protocol: ReceivedRequest["protocol"],
    request: FastifyRequest,
    reply: FastifyReply,
    body: unknown,
    path = request.url,
  ): PlannedAnswer {
    const entry = state.record({ protocol, method: request.method, path, headers: request.headers, body });
    return new PlannedAnswer(reply, entry);
  }

  /** A plan that cuts a synchronous answer drops the connection with nothing written; true then. */
  cutWhole(plan: Plan): boolean {
    if (plan.cutAfter === null) return false;
    this.cutting = true;
    this.reply.raw.destroy();
    return true;
  }
}

/** What a protocol writes at each point of a planned stream. */
export interface StreamSteps {
  /** Writes step `i`. */
  write(i: number): Promise<void>;
  /** Ends the answer early as if it were whole (`[truncate]`). */
  truncate(): void;
  /** Writes the protocol's error event at step `i` and ends the answer (`[error-event]`). */
  error(i: number): Promise<void>;
  /** Called before each step is written (a test's hook). */
  beforeChunk?: (i: number) => unknown;
}

/**
 * Writes `count` steps of a stream under the plan's faults, in the order every simulated
 * protocol applies them: at `cutAfter` the connection is half-closed (the answer ends without its
 * end), at `truncateAfter` the answer ends as if whole, at `errorAfter` an error event ends it;
 * otherwise the step waits its hook and the plan's delay and is written, unless the client is
 * gone. True when every step was written and the protocol's end is still to come.
 */
export async function writePlannedSteps(
  raw: ServerResponse,
  plan: Plan,
  answer: PlannedAnswer,
  count: number,
  steps: StreamSteps,
): Promise<boolean> {
  for (let i = 0; i < count; i++) {
    if (plan.cutAfter !== null && i === plan.cutAfter) {
      // Half-close after what was written is flushed: the answer ends without its last chunk.
      answer.cutting = true;
      raw.socket?.end();
      return false;
    }
    if (plan.truncateAfter !== null && i === plan.truncateAfter) {
      steps.truncate();
      return false;
    }
    if (plan.errorAfter !== null && i === plan.errorAfter) {
      await steps.error(i);
      return false;
    }
    await steps.beforeChunk?.(i);
    if (i > 0 && plan.delayMs > 0) await sleep(plan.delayMs);
    if (raw.destroyed) return false;
    await steps.write(i);
  }
  return true;
}
