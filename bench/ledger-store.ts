/**
 * The store's share of a content call on SQLite, alone: the CPU of the ledger's hold and
 * settlement (through the store's group commit, as the relay runs them) and of the request log's
 * row (through the request-log writer's flushes), per request, with the HTTP and the upstream left
 * out. `--concurrency` requests run at once, each as the relay runs one: its hold, one turn of the
 * event loop (where the upstream call would be), its settlement, its request-log row; the group
 * commit gathers the operations asked for in one turn into one transaction, so the commit's cost
 * per request falls as more requests run at once.
 *
 * Each round runs every part on a fresh store (a temporary directory): the loop alone (the turns
 * and the bench's own work, subtracted from the others), the ledger, the request log, and both.
 * `--without-index` drops indexes of that store first, to see what keeping each one costs.
 *
 * Usage: node --import tsx bench/ledger-store.ts [--requests 20000] [--rounds 5]
 *        [--concurrency 1,10,32] [--users 1] [--without-index name,name]
 *        [--parts "ledger,request log,ledger and request log"]
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { newRequestId, unixNow } from "../src/core/ids.js";
import { openStore, type Store } from "../src/store/database.js";
import { Ledger } from "../src/store/ledger.js";
import { migrateToLatest } from "../src/store/migrate.js";
import { type RequestLogEntry, RequestLogWriter, requestLogInsert } from "../src/store/request-logs.js";
import { Tokens } from "../src/store/tokens.js";
import { Users } from "../src/store/users.js";
import { median } from "./load.js";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "20000" },
    rounds: { type: "string", default: "5" },
    concurrency: { type: "string", default: "1,10,32" },
    users: { type: "string", default: "1" },
    "without-index": { type: "string", default: "" },
    parts: { type: "string", default: "" },
  },
});
const requests = Number(values.requests);
const rounds = Number(values.rounds);
const userCount = Number(values.users);
const concurrencies = values.concurrency.split(",").map(Number);
const droppedIndexes = values["without-index"].split(",").filter(Boolean);
for (const n of [requests, rounds, userCount, ...concurrencies]) {
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error("--requests, --rounds, --users and --concurrency: whole numbers >= 1");
}

const ALL_PARTS = ["loop alone", "ledger", "request log", "ledger and request log"] as const;
type Part = (typeof ALL_PARTS)[number];
/** `--parts`: the parts to run besides the loop alone (by default all of them). */
const PARTS: Part[] = [
  "loop alone",
  ...ALL_PARTS.slice(1).filter((p) => values.parts === "" || values.parts.split(",").includes(p)),
];

interface Fixture {
  store: Store;
  ledger: Ledger;
  writer: RequestLogWriter;
  accounts: { userId: number; tokenId: number }[];
  dir: string;
}

async function fixture(): Promise<Fixture> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "ledger-store-"));
  const store = openStore(`sqlite:${path.join(dir, "gateway.sqlite")}`);
  await migrateToLatest(store);
  for (const name of droppedIndexes) await store.db.schema.dropIndex(name).execute();
  const ledger = Ledger.forStore(store);
  const users = new Users(store.db);
  const tokens = new Tokens(store.db);
  const accounts: { userId: number; tokenId: number }[] = [];
  for (let i = 0; i < userCount; i++) {
    const user = await users.create({ name: `user-${i}` });
    await ledger.topUp(user.id, 1e15, `bench-${i}`);
    const { row } = await tokens.create({ userId: user.id, name: `token-${i}` });
    accounts.push({ userId: user.id, tokenId: row.id });
  }
  const writer = new RequestLogWriter(requestLogInsert(store), (err) => {
    throw err;
  });
  writer.start();
  return { store, ledger, writer, accounts, dir };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** One request as the relay makes it: hold, the upstream's turn, settlement, request-log row. */
async function request(f: Fixture, part: Part, i: number): Promise<void> {
  const account = f.accounts[i % f.accounts.length] as { userId: number; tokenId: number };
  const requestId = newRequestId();
  const reference = `content:${requestId}`;
  const startedAt = Date.now();
  const ledger = part === "ledger" || part === "ledger and request log";
  if (ledger) {
    await f.ledger.charge({
      userId: account.userId,
      tokenId: account.tokenId,
      amount: 8_000,
      reference,
      note: `hold for bench-model, request ${requestId}`,
      closeBy: startedAt + 600_000,
    });
  }
  await turn();
  if (ledger) await f.ledger.settle(reference, 1_250, `settled for bench-model, request ${requestId}`);
  if (part === "request log" || part === "ledger and request log") {
    const row: RequestLogEntry = {
      created_at: unixNow(),
      request_id: requestId,
      user_id: account.userId,
      token_id: account.tokenId,
      channel_id: 1,
      surface: "gemini",
      model: "bench-model",
      prompt_tokens: 12,
      completion_tokens: 40,
      cached_tokens: 0,
      quota: 1_250,
      latency_ms: 3,
      status: 200,
      error: null,
    };
    f.writer.log(row);
  }
}

/** CPU µs of the whole process (the checkpoint thread included) per request of one part. */
async function measure(part: Part, concurrency: number): Promise<number> {
  const f = await fixture();
  try {
    let next = 0;
    const worker = async () => {
      while (next < requests) await request(f, part, next++);
    };
    // A tenth of the requests first, uncounted: statements prepared, code warm.
    const warm = Math.max(concurrency, Math.floor(requests / 10));
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < warm) await request(f, part, next++);
      }),
    );
    await f.writer.flush();
    next = 0;
    const start = process.cpuUsage();
    await Promise.all(Array.from({ length: concurrency }, worker));
    await f.writer.flush();
    const used = process.cpuUsage(start);
    return (used.user + used.system) / requests;
  } finally {
    await f.writer.stop();
    await f.store.close();
    rmSync(f.dir, { recursive: true, force: true });
  }
}

console.log(
  `ledger-store: ${requests} requests per part and round, ${rounds} rounds, ${userCount} user(s)` +
    (droppedIndexes.length ? `, without ${droppedIndexes.join(", ")}` : ""),
);
for (const concurrency of concurrencies) {
  const samples = new Map<Part, number[]>(PARTS.map((p) => [p, []]));
  for (let round = 0; round < rounds; round++) {
    for (const part of PARTS) samples.get(part)?.push(await measure(part, concurrency));
  }
  const loop = median(samples.get("loop alone") ?? []);
  const cells = PARTS.slice(1).map((part) => {
    const all = samples.get(part) ?? [];
    const net = all.map((v) => v - loop);
    return `${part} ${median(net).toFixed(1)} (${Math.min(...net).toFixed(1)} to ${Math.max(...net).toFixed(1)})`;
  });
  console.log(
    `  ${String(concurrency).padStart(3)} at once: µs of CPU per request beyond the loop's ${loop.toFixed(1)}: ${cells.join("; ")}`,
  );
}
