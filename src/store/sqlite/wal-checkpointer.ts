import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { sqliteDriverName } from "./connection.js";

/** The last round's figures, in write-ahead-log frames (pages). */
export interface CheckpointRound {
  busy: number;
  log: number;
  checkpointed: number;
}

/**
 * Checkpoints an SQLite database in WAL mode from a thread of its own. A checkpoint copies the
 * pages of the write-ahead log into the database file and syncs it to disk: done by the
 * connection that commits (SQLite's default, every 1,000 pages), it stalls the event loop for
 * milliseconds at a time under load. Here a worker thread with its own connection does that
 * copying and syncing (PASSIVE: it never blocks a writer); the main connection keeps SQLite's
 * automatic checkpoint at a higher threshold, where it finds almost everything copied already and
 * only finishes the round, so that the log starts again from its beginning.
 */
export class WalCheckpointer {
  private readonly worker: Worker;
  private stopped: Promise<void> | null = null;
  private exited = false;
  /** The latest round's figures (null before the first round). */
  last: CheckpointRound | null = null;
  /** The latest error the worker reported, if any. */
  lastError: string | null = null;

  constructor(file: string, intervalMs: number) {
    const name = sqliteDriverName();
    const driver = name === "node:sqlite" ? name : createRequire(import.meta.url).resolve("better-sqlite3");
    this.worker = new Worker(new URL("./wal-checkpoint-worker.js", import.meta.url), {
      workerData: { driver, file, intervalMs },
    });
    this.worker.on("message", (message: { kind: string; message?: string } & CheckpointRound) => {
      if (message.kind === "round") {
        this.last = { busy: message.busy, log: message.log, checkpointed: message.checkpointed };
      } else if (message.kind === "error") {
        this.lastError = message.message ?? "unknown error";
      }
    });
    // A worker that fails leaves checkpoints to the main connection's automatic ones.
    this.worker.on("error", (err) => {
      this.lastError = err.message;
    });
    this.worker.once("exit", () => {
      this.exited = true;
    });
    this.worker.unref();
  }

  /** Stops the worker after its current round and closes its connection. */
  stop(): Promise<void> {
    if (this.stopped) return this.stopped;
    this.stopped = new Promise<void>((resolve) => {
      const done = () => resolve();
      if (this.exited) return done();
      // Until it has answered, the worker keeps the process alive.
      this.worker.ref();
      this.worker.once("exit", done);
      try {
        this.worker.postMessage("stop");
      } catch {
        done();
      }
      // A worker that does not answer is ended anyway.
      setTimeout(() => void this.worker.terminate().then(done, done), 2000).unref();
    });
    return this.stopped;
  }
}
