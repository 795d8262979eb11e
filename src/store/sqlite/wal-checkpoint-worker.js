// The checkpoint thread of WalCheckpointer (wal-checkpointer.ts). Plain JavaScript, so that it
// runs as it is from src/ (development, tests) and from dist/ (copied there by the build).
// Its own connection to the database; a PASSIVE checkpoint every interval through one statement
// prepared once and kept for the thread's life; on "stop", the connection is closed before the
// thread ends, so no statement outlives it.
import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";

/** @param {{ driver: string, file: string }} data */
function connect(data) {
  if (data.driver === "node:sqlite") {
    const { DatabaseSync } = process.getBuiltinModule("node:sqlite");
    return new DatabaseSync(data.file);
  }
  const Database = createRequire(import.meta.url)(data.driver);
  return new Database(data.file, { fileMustExist: true });
}

const db = connect(workerData);
db.exec("PRAGMA synchronous = NORMAL");
const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");

const timer = setInterval(() => {
  try {
    const row = checkpoint.get();
    parentPort.postMessage({ kind: "round", busy: row.busy, log: row.log, checkpointed: row.checkpointed });
  } catch (err) {
    parentPort.postMessage({ kind: "error", message: String(err?.message ?? err) });
  }
}, workerData.intervalMs);

parentPort.on("message", (message) => {
  if (message !== "stop") return;
  clearInterval(timer);
  db.close();
  parentPort.postMessage({ kind: "stopped" });
  // Nothing is left to keep the thread alive: it ends on its own.
  parentPort.close();
});
