/** Settings of the simulator and of each protocol it speaks. */

/** Settings of the simulated `task-relay` upstream. */
export interface TaskRelaySimOptions {
  /** Time from submit until a task ends (ms). Default 3000. */
  completeAfterMs?: number;
  /** Share of that time a task waits as QUEUED before it runs (0..1). Default 0.1. */
  queuedFraction?: number;
  /** Progress steps while running: 5 gives 20%, 40%, 60%, 80%. Default 5. */
  progressSteps?: number;
  /** Clips made per task. Default 2. */
  clipsPerTask?: number;
  /** Delay before every answer (ms). Default 0. */
  latencyMs?: number;
  /** Share of tasks (0..1) that end in FAILURE. A prompt holding `[fail]` always does. */
  failureRate?: number;
  /** Actions whose tasks always end in FAILURE (e.g. `["WAV", "STEMS"]`), for bodies that carry no prompt. */
  failActions?: string[];
  /** Share of submits (0..1) refused. A prompt holding `[refuse]` always is. */
  refuseRate?: number;
  /** Most ids one fetch accepts. Default 100. */
  maxBatch?: number;
}

/** Settings of the simulated `generate-record` upstream. */
export interface GenerateRecordSimOptions {
  /** Time from submit until a task ends (ms). Default 3000. */
  completeAfterMs?: number;
  /** Clips made per task. Default 2. */
  clipsPerTask?: number;
  /** Delay before every answer (ms). Default 0. */
  latencyMs?: number;
  /** Share of tasks (0..1) that end in GENERATE_AUDIO_FAILED. A prompt holding `[fail]` always does. */
  failureRate?: number;
  /** Actions whose tasks always fail (e.g. `["WAV", "STEMS"]`), for actions whose bodies carry no prompt. */
  failActions?: string[];
  /** Share of submits (0..1) refused. A prompt holding `[refuse]` always is. */
  refuseRate?: number;
  /** POST the protocol's callbacks to `callBackUrl` when a task reaches a stage. Default true. */
  callbacks?: boolean;
  /** How often the one callback timer looks for stages reached (ms). Default 20. */
  callbackTickMs?: number;
}

/** How the simulated image model ends an answer. Prompt markers override it per request. */
export type GeminiImageOutcome = "image" | "no-image" | "blocked" | "image-safety" | "error-400" | "error-500";

/**
 * Settings of the simulated Gemini image models. Prompt markers pick an outcome for one request:
 * `[noimage]` (STOP with text only), `[blocked]` (promptFeedback.blockReason SAFETY),
 * `[imagesafety]` (finishReason IMAGE_SAFETY), `[error400]`, `[error500]`.
 */
export interface GeminiImageSimOptions {
  outcome?: GeminiImageOutcome;
  /** Adds a text part before the image (real models often do). Default true. */
  textPart?: boolean;
}

/**
 * Settings of the simulated Gemini text models. Each can also be switched on for one request by
 * a marker in the prompt: `[429]`, `[500]`, `[503]` (error answer), `[cut]` (connection cut
 * mid-stream), `[truncate]` (stream closed cleanly without its final chunk), `[error-event]` (error
 * event mid-stream), `[blocked]` (safety block), `[slow]`
 * (a delay before every chunk after the first), `[thoughts]`, `[cached]`, `[nousage]`, `[chunks=N]`.
 */
export interface GeminiTextSimOptions {
  /** Chunks of a streamed answer (and parts of the text of a synchronous one). Default 3. */
  chunks?: number;
  /** Delay before each chunk after the first (ms). Default 0; `[slow]` makes it 200. */
  chunkDelayMs?: number;
  /** Every request answers this error status instead. */
  status?: 429 | 500 | 503;
  /** The connection is cut after this many chunks. */
  failAfterChunks?: number;
  /** The stream ends cleanly after this many chunks, without its final chunk. */
  truncateAfterChunks?: number;
  /** An error event is sent after this many chunks, then the stream ends. */
  errorAfterChunks?: number;
  /** Answers with a safety block: 200, `promptFeedback.blockReason` and no candidates. */
  blocked?: boolean;
  /** Reports this many thought tokens. */
  thoughtsTokens?: number;
  /** Reports this many cached prompt tokens (at most the prompt). */
  cachedTokens?: number;
  /** Sends no usageMetadata at all. */
  noUsage?: boolean;
  /** Awaited before chunk `index` is written: lets a test hold a stream at a known point. */
  beforeChunk?: (index: number) => Promise<void> | void;
}

/** How the simulated images API ends an answer. Prompt markers override it per request. */
export type OpenAiImagesOutcome = "image" | "empty" | "error-400" | "error-500";

/**
 * Settings of the simulated `openai-images` upstream. Prompt markers: `[empty]` (no images),
 * `[fewer]` (one image fewer than asked), `[error400]`, `[error500]`, `[slow]` (answers after
 * `slowMs`).
 */
export interface OpenAiImagesSimOptions {
  outcome?: OpenAiImagesOutcome;
  /** Answer with URLs or base64 whatever the request asked (default: as asked; `url` when unset). */
  answerWith?: "url" | "b64_json";
  /** Most images in one answer. */
  maxImages?: number;
  /** How long a `[slow]` request waits before its answer (ms). Default 2000. */
  slowMs?: number;
}

/** How a simulated video ends, or which error its requests meet. Prompt markers override it per video. */
export type OpenAiVideosOutcome = "completed" | "failed" | "create-500" | "create-429" | "poll-500";

/**
 * Settings of the simulated `openai-videos` upstream (the OpenAI Videos API). Prompt markers pick
 * an outcome for one video: `[fail]` (ends failed, a moderation-like error), `[error500]` and
 * `[error429]` (the create is answered 500 or 429), `[poll500]` (every retrieve answers 500),
 * `[poll500=N]` (the first N retrieves do), `[slowcontent]` (its content trickles out over
 * `slowContentMs`), `[slowcontent=MS]` (over MS milliseconds).
 */
export interface VideosSimOptions {
  outcome?: OpenAiVideosOutcome;
  /** Retrieves a video takes from `queued` to its end (progress rises on each). Default 2. */
  stepsToComplete?: number;
  /** Share of created videos (0..1) that end `failed`. */
  failureRate?: number;
  /** Share of creates (0..1) answered 500 (nothing is created). */
  createErrorRate?: number;
  /** Share of creates (0..1) answered 429 (nothing is created). */
  rateLimitRate?: number;
  /** Share of retrieves (0..1) answered 500 (the video does not move on). */
  pollErrorRate?: number;
  /** A video this long past its end is forgotten: retrieve and content answer 404. */
  forgetAfterMs?: number;
  /** `expires_at` is this many seconds after `completed_at`. Default: `forgetAfterMs` rounded up, else 3600. */
  expiresAfterSeconds?: number;
  /** How long the content of a `[slowcontent]` video takes to trickle out (ms). Default 3000. */
  slowContentMs?: number;
  /** Share of created videos (0..1) whose content is slow, as with `[slowcontent]`. */
  slowContentRate?: number;
  /** Delay before every answer (ms). Default 0. */
  latencyMs?: number;
}

/** Settings of the simulated `gemini` upstream: text and image models. */
export interface GeminiSimOptions {
  text?: GeminiTextSimOptions;
  image?: GeminiImageSimOptions;
}

/** Settings of the result files the simulated music upstreams serve. */
export interface MediaSimOptions {
  /** Every result file answers 404, as once an upstream's links have expired. */
  gone?: boolean;
}

export interface SimulatorOptions {
  host?: string;
  port?: number;
  /** Seed of the simulator's random choices: the same seed gives the same run. */
  seed?: number;
  /** Keys the simulator accepts; any non-empty key when absent. */
  keys?: string[];
  taskRelay?: TaskRelaySimOptions;
  generateRecord?: GenerateRecordSimOptions;
  gemini?: GeminiSimOptions;
  openaiImages?: OpenAiImagesSimOptions;
  /** The simulated `openai-chat` upstream: the Gemini text model's options and prompt markers. */
  openaiChat?: GeminiTextSimOptions;
  /** The simulated `anthropic` upstream: the Gemini text model's options and prompt markers. */
  anthropic?: GeminiTextSimOptions;
  /** The simulated `deepseek` upstream (under `/deepseek`): the Gemini text model's options and prompt markers. */
  deepseek?: GeminiTextSimOptions;
  /** The simulated `openai-videos` upstream (`/v1/videos`). */
  videos?: VideosSimOptions;
  /** The result files of the music upstreams (`/media/...`). */
  media?: MediaSimOptions;
}
