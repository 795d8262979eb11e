import type { Dispatcher } from "undici";
import { UpstreamError } from "../core/upstream-error.js";
import { ChunkQueue } from "./chunk-queue.js";
import { type ChunkBody, networkError, type PreparedCall, prepareCall, safeUrl, type UpstreamCall } from "./http.js";
import { agentFor } from "./pools.js";

/** An upstream answer read whole. */
export interface UpstreamText {
  statusCode: number;
  headers: Dispatcher.ResponseData["headers"];
  text: string;
}

/** Largest answer read whole when the caller sets no limit. */
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

/** The reason an aborted signal gives, as the Error undici's controller takes. */
function reasonOf(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException("This operation was aborted", "AbortError");
}

/** The call prepared as every upstream call is (see prepareCall), with its signal as an AbortSignal. */
interface Prepared {
  options: Dispatcher.DispatchOptions;
  signal: AbortSignal | undefined;
  clear: () => void;
}

/** Runs `run` with the call prepared, or fails as preparing it failed (see prepareCall). */
function withPrepared<T>(call: UpstreamCall, run: (prepared: Prepared) => Promise<T>): Promise<T> {
  let prepared: PreparedCall;
  try {
    prepared = prepareCall(call);
  } catch (err) {
    return Promise.reject(err);
  }
  const { options, clear } = prepared;
  // The pool's dispatch does not read the signal: the direct calls watch it themselves.
  return run({ options, signal: (options.signal ?? undefined) as AbortSignal | undefined, clear });
}

/**
 * Hands the call to its pool with the caller's signal watched: `onAbort` runs at once when the
 * signal is already aborted (nothing is sent) and when it aborts later; `started` receives the
 * call's controller once the pool starts it, and a call whose signal fired before that is aborted
 * there. The handler's own `onRequestStart` is set here.
 */
function dispatchWatched(
  call: UpstreamCall,
  { options, signal }: Pick<Prepared, "options" | "signal">,
  onAbort: () => void,
  started: (controller: Dispatcher.DispatchController) => void,
  handler: Dispatcher.DispatchHandler,
): void {
  if (signal?.aborted) {
    onAbort();
    return;
  }
  signal?.addEventListener("abort", onAbort, { once: true });
  handler.onRequestStart = (controller) => {
    started(controller);
    if (signal?.aborted) controller.abort(reasonOf(signal));
  };
  agentFor(call.connectTimeoutMs).dispatch(options, handler);
}

/**
 * Sends one upstream request and reads its whole answer as text: for an answer that is read whole
 * anyway (a synchronous content call, an error). It goes straight to the pool's `dispatch`, the
 * answer's chunks gathered as they arrive: undici's `request` (what `callUpstream` uses) makes a
 * readable stream of every answer and a handler of its own that watches the signal, which a body
 * read whole at once has no use for. Everything else is as `callUpstream` and a read of its
 * body: the same options and pools, a body that cannot be serialised is a plain error, network
 * failures and aborts come back as classified UpstreamErrors, and `timeoutMs` holds until the
 * answer is read. An answer above `maxBytes` is dropped as a retryable failure.
 */
export function callUpstreamForText(call: UpstreamCall, maxBytes = DEFAULT_MAX_BYTES): Promise<UpstreamText> {
  return withPrepared(
    call,
    ({ options, signal, clear }) =>
      new Promise<UpstreamText>((resolve, reject) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let statusCode = 0;
        let headers: UpstreamText["headers"] = {};
        let controller: Dispatcher.DispatchController | null = null;
        let done = false;
        const finish = (error: unknown, answer?: UpstreamText) => {
          if (done) return;
          done = true;
          signal?.removeEventListener("abort", onAbort);
          clear();
          if (answer) resolve(answer);
          else reject(error);
        };
        // Aborted while still waiting for a connection: the call fails at once, and is dropped as
        // soon as the pool starts it.
        const onAbort = () => {
          const reason = reasonOf(signal as AbortSignal);
          controller?.abort(reason);
          finish(networkError(reason, call.url));
        };
        const started = (c: Dispatcher.DispatchController) => {
          controller = c;
        };
        dispatchWatched(call, { options, signal }, onAbort, started, {
          onResponseStart(_c, status, answerHeaders) {
            statusCode = status;
            headers = answerHeaders;
          },
          onResponseData(c, chunk) {
            size += chunk.length;
            if (size > maxBytes) {
              c.abort(
                new UpstreamError("retryable", `upstream answer larger than ${maxBytes} bytes (${safeUrl(call.url)})`),
              );
              return;
            }
            chunks.push(chunk);
          },
          onResponseEnd() {
            finish(null, { statusCode, headers, text: Buffer.concat(chunks, size).toString("utf8") });
          },
          onResponseError(_c, err) {
            finish(err instanceof UpstreamError ? err : networkError(err, call.url));
          },
        });
      }),
  );
}

/** An upstream answer whose body is read as it arrives. */
export interface UpstreamStream {
  statusCode: number;
  headers: Dispatcher.ResponseData["headers"];
  body: ChunkBody;
}

/** Chunks held before the upstream's socket is paused, while the reader is behind. */
const HELD_CHUNKS = 16;

/** Why a body dropped by its reader is ended (never seen by a caller). */
const DROPPED = new Error("The reader dropped the answer.");

/**
 * Sends one upstream request and resolves once its answer's head has arrived, its body to be read
 * as it comes: for a stream read chunk by chunk. Straight on the pool's `dispatch`, as
 * callUpstreamForText: undici's `request` makes each answer a readable stream, which the reader
 * (`bodyChunks`) only turns back into chunks. The body holds up to HELD_CHUNKS chunks, then
 * pauses the socket until the reader catches up. A body that fails makes the reader's `next`
 * reject with undici's error once the chunks before it are read, as the readable's iterator
 * does (callers classify it); `return` or `destroy` drop the call. Failures before the head come
 * back as classified UpstreamErrors, as `callUpstream`'s do; `timeoutMs` holds until the body has
 * been read or dropped.
 */
export function callUpstreamStreaming(call: UpstreamCall): Promise<UpstreamStream> {
  return withPrepared(
    call,
    ({ options, signal, clear }) =>
      new Promise<UpstreamStream>((resolve, reject) => {
        const queue = new ChunkQueue();
        let controller: Dispatcher.DispatchController | null = null;
        let headed = false;
        // Ended, failed or dropped: nothing more comes from the upstream.
        let over = false;
        const close = () => {
          over = true;
          signal?.removeEventListener("abort", onAbort);
          clear();
        };
        const fail = (err: unknown) => {
          if (over) return;
          close();
          if (!headed) reject(err instanceof UpstreamError ? err : networkError(err, call.url));
          queue.fail(err);
        };
        const onAbort = () => {
          const reason = reasonOf(signal as AbortSignal);
          fail(reason);
          controller?.abort(reason);
        };
        const drop = () => {
          queue.drop();
          if (over) return;
          close();
          controller?.abort(DROPPED);
        };
        const body: ChunkBody = {
          next() {
            const next = queue.next();
            if (!over && queue.length < HELD_CHUNKS && controller?.paused) controller.resume();
            return next;
          },
          return() {
            drop();
            return Promise.resolve({ value: undefined, done: true });
          },
          destroy() {
            drop();
          },
          [Symbol.asyncIterator]() {
            return this;
          },
        };
        const started = (c: Dispatcher.DispatchController) => {
          controller = c;
        };
        dispatchWatched(call, { options, signal }, onAbort, started, {
          onResponseStart(_c, statusCode, headers) {
            if (over) return;
            headed = true;
            resolve({ statusCode, headers, body });
          },
          onResponseData(c, chunk) {
            // undici hands on an empty chunk when it resumes a paused parser: nothing to read.
            if (over || chunk.length === 0) return;
            queue.push(chunk);
            if (queue.length >= HELD_CHUNKS) c.pause();
          },
          onResponseEnd() {
            if (over) return;
            close();
            queue.end();
          },
          onResponseError(_c, err) {
            fail(err);
          },
        });
      }),
  );
}
