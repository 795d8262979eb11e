/** The shape of bench/results/<date>.json: one run, every figure from the same run. */
import type { FirstEventResult } from "./first-event.js";
import type { LoadResult } from "./load.js";

export type TargetId = "direct" | "bare-relay" | "gateway-sqlite" | "gateway-postgres" | "peer";

/** The throughput loads: Gemini generateContent, its SSE stream, and streamed OpenAI chat completions. */
export type Phase = "generate" | "stream" | "chat";
export const PHASES: readonly Phase[] = ["generate", "stream", "chat"];

export interface TargetResult {
  id: TargetId;
  label: string;
  /** What the target does between client and simulator. */
  description: string;
  available: boolean;
  /** Why a target could not be measured (install failure, route not answering 200, ...). */
  unavailableReason?: string;
  /** Median of the rounds (see `medianOfRounds`). */
  generate?: LoadResult;
  stream?: LoadResult;
  chat?: LoadResult;
  /** Every round, in order: round i of each target ran under the same machine state. */
  generateRounds?: LoadResult[];
  streamRounds?: LoadResult[];
  chatRounds?: LoadResult[];
  firstEvent?: FirstEventResult;
  /** Why one phase of an available target failed. */
  errors?: string[];
}

export interface ProcessMemory {
  name: string;
  /** RSS after start-up and set-up, before any load. */
  idleMiB: number | null;
  /** Highest RSS sampled while the process was under the relay loads (the loads every relay serves). */
  loadedMiB: number | null;
  /**
   * Highest RSS sampled under the image load, which only the gateways serve (each answer holds a
   * whole image); kept apart so that the relays are compared under the same loads. Absent in runs
   * saved before it was measured apart.
   */
  imagesMiB?: number | null;
  /** VmHWM at the end: the peak since the process started. */
  peakMiB: number | null;
}

export interface TaskFigures {
  store: "sqlite" | "postgres";
  ran: boolean;
  note?: string;
  durationSeconds?: number;
  /** The JSON lines the task benchmark printed. */
  results: Record<string, unknown>[];
}

export interface TargetCheck {
  name: string;
  goal: string;
  measured: string;
  verdict: "met" | "missed" | "not measured";
}

export interface ProfileEntry {
  functionName: string;
  location: string;
  selfPercent: number;
}

export interface ProfileSummary {
  /** Share of sampled time per area (our source, fastify, pino, undici, node internals, ...). */
  byArea: { area: string; selfPercent: number }[];
  /** Share of samples with the area anywhere on the stack (a package with what it calls); `selfPercent` holds it. */
  inclusiveByArea: { area: string; selfPercent: number }[];
  topFunctions: ProfileEntry[];
  samples: number;
}

export interface BenchResults {
  date: string;
  startedAt: string;
  finishedAt: string;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; platform: string; node: string };
  settings: {
    /** What the paths relayed to; absent in runs made before the minimal upstream existed (the simulator). */
    upstream?: "minimal" | "simulator";
    /** A --quick smoke run: its figures say that every path answers, not how fast. */
    quick?: boolean;
    connections: number;
    durationSeconds: number;
    warmupSeconds: number;
    /** Rounds of each load; absent in runs made before rounds existed (one round). */
    rounds?: number;
    firstEventRequests: number;
    model: string;
    prompt: string;
    streamPrompt: string;
    firstEventPrompt: string;
    /** The model of the chat load, on an `openai-chat` channel. */
    chatModel?: string;
    /** Users of each gateway, its loads spread over their tokens; absent: one user (a hot user). */
    users?: number;
  };
  peer: {
    package: string;
    version: string | null;
    node: string;
    works: boolean;
    note?: string;
    /** How its native Gemini pass-through route answered one request (not loaded). */
    nativeRoute?: string;
    /**
     * How its `openai` provider (custom host) answered one streamed chat request: "answers 200",
     * or why not, in which case its chat load went through its `google` provider.
     */
    openAiChatRoute?: string;
  };
  targets: TargetResult[];
  images: { direct?: LoadResult; gateway?: LoadResult; gatewayPostgres?: LoadResult; notes: string[] };
  memory: ProcessMemory[];
  tasks: TaskFigures[];
  checks: TargetCheck[];
  /** With --profile: the SQLite gateway's CPU profile during each of its loads (images included). */
  profile?: Partial<Record<Phase | "images", ProfileSummary>>;
  notes: string[];
}

/** The rounds of one phase of a target; a run saved before rounds existed has its one figure. */
export function roundsOf(target: TargetResult | undefined, phase: Phase): LoadResult[] | undefined {
  const rounds = target?.[`${phase}Rounds` as const];
  if (rounds && rounds.length > 0) return rounds;
  const single = target?.[phase];
  return single ? [single] : undefined;
}
