import type { FastifyInstance } from "fastify";

/** The usage fields of one Gemini answer chunk, as the simulator reported them (cumulative). */
export interface ReportedUsage {
  promptTokenCount: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
}

/**
 * What the simulator answered one billable request with: the usage it reported (each chunk's, in
 * the order written), the images it delivered, the task it accepted and how that task ends. A
 * client of the simulator (the reliability run) recomputes what the gateway should have billed
 * from these, without reading the gateway's store.
 */
export interface UsageRecord {
  protocol: "gemini" | "openai-images" | "task-relay" | "generate-record" | "openai-videos";
  model: string;
  /** The request's prompt text, so a caller can tell its own requests apart. */
  prompt: string;
  at: number;
  /** Content: the usageMetadata of every chunk written (a synchronous answer has one). */
  usage: ReportedUsage[];
  /** Images: how many the answer carried. */
  images: number;
  /** Tasks and videos: the task (or video) accepted, and how it ends. */
  task: { id: string; ends: "success" | "failure" } | null;
  /** The whole answer was written out (false: the client went away, or the answer was cut). */
  complete: boolean;
}

/** Most records kept; later requests are counted in `dropped` instead. */
export const USAGE_LOG_LIMIT = 200_000;

/** The simulator's record of what it reported, newest last. */
export class UsageLog {
  readonly records: UsageRecord[] = [];
  dropped = 0;

  /** Starts a record; the caller fills it in as the answer is written. */
  open(entry: Pick<UsageRecord, "protocol" | "model" | "prompt"> & Partial<UsageRecord>): UsageRecord {
    const record: UsageRecord = { usage: [], images: 0, task: null, complete: false, at: Date.now(), ...entry };
    if (this.records.length < USAGE_LOG_LIMIT) this.records.push(record);
    else this.dropped += 1;
    return record;
  }

  /** Records a task (or video) accepted whose end was decided when it was submitted. */
  openTask(
    protocol: UsageRecord["protocol"],
    task: { id: string; model: string; prompt: string },
    ends: "success" | "failure",
  ): UsageRecord {
    return this.open({ protocol, model: task.model, prompt: task.prompt, task: { id: task.id, ends }, complete: true });
  }
}

/** `GET /simulator/usage`: the usage log, read-only. */
export async function usageLogRoute(app: FastifyInstance, opts: { log: UsageLog }) {
  app.get("/simulator/usage", async () => ({ records: opts.log.records, dropped: opts.log.dropped }));
}
