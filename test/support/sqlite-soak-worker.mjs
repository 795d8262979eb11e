// A thread of the SQLite soak (sqlite-soak.mjs): its own connection through the compiled store,
// statements prepared by the hundred, and the connection closed or left open for the thread's end.
import { parentPort, workerData } from "node:worker_threads";
import { openSqlite } from "../../dist/store/sqlite/connection.js";

const db = openSqlite(workerData.file);
for (let i = 0; i < 300; i++) db.prepare(`select ${i} as n`).get();
if (workerData.close) db.close();
parentPort.postMessage("ready");
