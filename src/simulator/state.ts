import type { FastifyReply, FastifyRequest } from "fastify";
import type { SimulatorOptions } from "./options.js";
import type { UsageLog } from "./usage-log.js";

/** One request as the simulator received it, for tests to inspect. */
export interface ReceivedRequest {
  protocol:
    | "task-relay"
    | "generate-record"
    | "gemini"
    | "openai-images"
    | "openai-chat"
    | "openai-embeddings"
    | "gemini-embeddings"
    | "anthropic"
    | "openai-videos"
    | "deepseek";
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  at: number;
  /** Set when the client went away before the answer was complete. */
  aborted?: boolean;
}

/** What each protocol plugin shares with the others. */
export interface SimulatorState {
  options: SimulatorOptions;
  received: ReceivedRequest[];
  /** Deterministic random numbers in [0, 1) from the seed. */
  random(): number;
  /** Base URL the simulator listens on (for URLs it hands out). */
  baseUrl(): string;
  record(entry: Omit<ReceivedRequest, "at">): ReceivedRequest;
  /** What each billable answer reported (usage, images, tasks). */
  usage: UsageLog;
}

/** The part of a request both answers need. */
export interface GeminiSimRequest {
  model: string;
  method: "generateContent" | "streamGenerateContent";
  /** `alt=sse` given. */
  sse: boolean;
  body: any;
  request: FastifyRequest;
  reply: FastifyReply;
  state: SimulatorState;
}
