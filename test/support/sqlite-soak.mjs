// The SQLite soak: run by test/foundation/sqlite-soak.test.ts as a process of its own, with the
// compiled store (dist/), exactly as the gateway runs it. Statements are created and dropped by the
// thousand and collected, worker threads with connections of their own start and end, stores open
// and close (each with its checkpoint thread), and the process exits while writes are in flight.
// The test asserts exit code 0 every time.
import { Worker } from "node:worker_threads";
import { sql } from "kysely";
import { openStore } from "../../dist/store/database.js";
import { openSqlite, sqliteDriverName } from "../../dist/store/sqlite/connection.js";

const [dir, seed] = process.argv.slice(2);
const file = `${dir}/soak-${seed}.sqlite`;
const collect = () => globalThis.gc?.();

// 1. A store, its table, and statements prepared and dropped: distinct texts through the query
//    builder (past the statement cache, so cached statements are evicted) and straight on the
//    connection (never cached), collected as they go.
const store = openStore(`sqlite:${file}`);
const db = store.sqlite;
db.exec("create table if not exists soak (id integer primary key, n integer, body text)");
for (let round = 0; round < 4; round++) {
  for (let i = 0; i < 700; i++) {
    await sql`select ${sql.raw(String(round * 1000 + i))} as n`.execute(store.db);
    db.prepare(`select count(*) + ${i} as n from soak`).get();
  }
  collect();
}

// 2. Worker threads, each with its own connection and statements, some closing it, some ended
//    from outside while it is open; and stores opened and closed, each with a checkpoint thread.
const workerFile = new URL("./sqlite-soak-worker.mjs", import.meta.url);
for (let i = 0; i < 8; i++) {
  const worker = new Worker(workerFile, { workerData: { file, close: i % 2 === 0 } });
  await new Promise((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  await worker.terminate();
  collect();
}
for (let i = 0; i < 4; i++) {
  const other = openStore(`sqlite:${file}`);
  await sql`select ${sql.raw(String(i))} as n`.execute(other.db);
  await other.close();
  collect();
}
const direct = openSqlite(file);
direct.prepare("select 1").get();
direct.close();

// 3. Writes in flight through the group commit and the query builder, and the process exits
//    in the middle of them, the store still open.
const insert = db.prepare("insert into soak (n, body) values (?, ?)");
let written = 0;
const load = setInterval(() => {
  for (let i = 0; i < 50; i++) {
    void store.commits.run(() => insert.run(i, "x".repeat(200))).then(() => written++);
    void sql`insert into soak (n, body) values (${i}, ${`q${written}`})`.execute(store.db);
  }
  db.prepare(`select max(id) + ${written} from soak`).get();
}, 1);
setTimeout(() => {
  clearInterval(load);
  collect();
  process.stdout.write(`${JSON.stringify({ driver: sqliteDriverName(), written })}\n`);
  process.exit(0);
}, 300);
