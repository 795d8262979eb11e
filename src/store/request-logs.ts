import type { Insertable, Kysely } from "kysely";
import type { Store } from "./database.js";
import { fixedStatement } from "./postgres/fixed-statement.js";
import type { Database, RequestLogsTable } from "./schema.js";
import type { SqliteConnection } from "./sqlite/connection.js";
import type { GroupCommit } from "./sqlite/group-commit.js";
import { addUsageTotals, incrementsOf, postgresTotalsFrom, sqliteUpsert, TOTALS_TABLES } from "./usage-aggregates.js";

export type RequestLogEntry = Insertable<RequestLogsTable>;

/** Writes a batch of rows to the store; resolves once they are committed. */
export type RequestLogInsert = (rows: RequestLogEntry[]) => Promise<void>;

/** Rows of one multi-row insert through the query builder: one statement text, prepared once. */
const ROWS_PER_STATEMENT = 100;

const COLUMNS = [
  "created_at",
  "request_id",
  "user_id",
  "token_id",
  "channel_id",
  "surface",
  "model",
  "prompt_tokens",
  "completion_tokens",
  "cached_tokens",
  "quota",
  "latency_ms",
  "status",
  "error",
  "input_tokens",
  "cache_read_tokens",
  "cache_write_5m_tokens",
  "cache_write_1h_tokens",
  "audio_input_tokens",
  "output_tokens",
  "reasoning_tokens",
  "audio_output_tokens",
  "estimated",
] as const;

/** A row's values in the order of COLUMNS. */
function rowValues(r: RequestLogEntry): unknown[] {
  return [
    r.created_at,
    r.request_id,
    r.user_id ?? null,
    r.token_id ?? null,
    r.channel_id ?? null,
    r.surface,
    r.model,
    r.prompt_tokens,
    r.completion_tokens,
    r.cached_tokens,
    r.quota,
    r.latency_ms,
    r.status,
    r.error ?? null,
    r.input_tokens ?? null,
    r.cache_read_tokens ?? null,
    r.cache_write_5m_tokens ?? null,
    r.cache_write_1h_tokens ?? null,
    r.audio_input_tokens ?? null,
    r.output_tokens ?? null,
    r.reasoning_tokens ?? null,
    r.audio_output_tokens ?? null,
    r.estimated ?? 0,
  ];
}

/**
 * One prepared single-row insert per row, and one prepared upsert per key of the usage totals the
 * rows add to, in the store's next group commit (one savepoint: the rows and their totals commit
 * or fail together).
 */
function sqliteInsert(sqlite: SqliteConnection, commits: GroupCommit): RequestLogInsert {
  let insertAll: ((rows: RequestLogEntry[]) => void) | null = null;
  const prepare = () => {
    const insert = sqlite.prepare(
      `insert into request_logs (${COLUMNS.join(", ")}) values (${COLUMNS.map(() => "?").join(", ")})`,
    );
    const totals = TOTALS_TABLES.map((table) => ({ table, upsert: sqlite.prepare(sqliteUpsert(table)) }));
    return sqlite.transaction((rows: RequestLogEntry[]) => {
      for (const r of rows) {
        insert.run(...rowValues(r));
      }
      for (const { table, upsert } of totals) {
        for (const values of incrementsOf(table, rows)) upsert.run(...values);
      }
    });
  };
  return (rows) =>
    commits.run(() => {
      insertAll ??= prepare();
      insertAll(rows);
    });
}

const ROWS = "flushed";
/** The totals' upserts, as data-modifying parts of the statement (each runs once, in full). */
const TOTALS = postgresTotalsFrom(ROWS)
  .map((insert, i) => `, totals_${i} as (\n    ${insert}\n  )`)
  .join("");

/**
 * PostgreSQL: every row of a flush in one statement of fixed text, each column an array; the same
 * statement adds the rows to the usage totals (its parts commit together).
 */
const POSTGRES_INSERT = fixedStatement(
  `with ${ROWS} as (
    select * from unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::text[],
      $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::integer[], $13::integer[], $14::text[],
      $15::bigint[], $16::bigint[], $17::bigint[], $18::bigint[], $19::bigint[], $20::bigint[], $21::bigint[],
      $22::bigint[], $23::integer[])
      as r(${COLUMNS.join(", ")})
  )${TOTALS}
  insert into request_logs (${COLUMNS.join(", ")}) select * from ${ROWS}`,
);

function postgresInsert(db: Kysely<Database>): RequestLogInsert {
  return async (rows) => {
    const columns = COLUMNS.map(() => [] as unknown[]);
    for (const r of rows) {
      for (const [i, v] of rowValues(r).entries()) columns[i]?.push(v);
    }
    await POSTGRES_INSERT(db, columns);
  };
}

/** Multi-row inserts of at most ROWS_PER_STATEMENT rows and their totals, in one transaction. */
function builderInsert(db: Kysely<Database>): RequestLogInsert {
  return (rows) =>
    db.transaction().execute(async (trx) => {
      for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
        await trx
          .insertInto("request_logs")
          .values(rows.slice(i, i + ROWS_PER_STATEMENT))
          .execute();
      }
      await addUsageTotals(trx, rows);
    });
}

/**
 * How request-log rows reach a store, each batch with what it adds to the usage totals
 * (`usage-aggregates.ts`). On SQLite a prepared single-row insert per row joins the next group
 * commit: a multi-row insert of a few hundred rows is a new statement text almost every time,
 * compiled and prepared again, and held the event loop for milliseconds. On PostgreSQL one
 * statement of fixed text takes every row of a flush as arrays, one per column.
 */
export function requestLogInsert(store: Store): RequestLogInsert {
  if (store.sqlite && store.commits) return sqliteInsert(store.sqlite, store.commits);
  return store.dialect === "postgres" ? postgresInsert(store.db) : builderInsert(store.db);
}

/**
 * Writes request-log rows off the hot path: `log()` only queues; a timer flushes the queue in
 * one multi-row insert. Should a batch fail, its rows are written again one by one, so a row the
 * store refuses is the only one lost: it is dropped with a warning, never retried into a growing
 * queue, and it never takes another request's rows with it.
 * It runs as one of the gateway's background services (a name, `start`, `stop`).
 */
export class RequestLogWriter {
  readonly name = "request-log-writer";
  private queue: RequestLogEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  /** A flush asked for that has not begun yet (it waits for the one before it). */
  private waiting: Promise<void> | null = null;

  constructor(
    private readonly insert: RequestLogInsert,
    private readonly onError: (err: unknown) => void,
    private readonly options: { intervalMs: number; maxBatch: number; maxQueue: number } = {
      intervalMs: 200,
      maxBatch: 500,
      maxQueue: 100_000,
    },
  ) {}

  log(entry: RequestLogEntry): void {
    if (this.queue.length >= this.options.maxQueue) return;
    this.queue.push(entry);
    if (this.queue.length >= this.options.maxBatch) void this.flush();
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), this.options.intervalMs);
    this.timer.unref();
  }

  /**
   * Writes everything queued so far; resolves when it is in the store. A flush writes the rows
   * queued when it begins, in batches of at most `maxBatch`, and no more: rows that arrive while
   * it writes wait for the next flush (the timer's or a full queue's), so that a steady stream of
   * requests does not turn one flush into an insert per turn of the event loop (each one an
   * operation of the group commit, the request log's pages written again in every batch's commit).
   * A flush asked for while another one waits to begin is that one.
   */
  flush(): Promise<void> {
    if (this.waiting) return this.waiting;
    // A flush that failed (an error handler that threw) does not stop the ones after it.
    const flush = this.flushing
      .catch(() => undefined)
      .then(async () => {
        this.waiting = null;
        let left = this.queue.length;
        while (left > 0) {
          const batch = this.queue.splice(0, Math.min(left, this.options.maxBatch));
          left -= batch.length;
          try {
            await this.insert(batch);
          } catch (err) {
            if (batch.length === 1) this.onError(err);
            else await this.insertOneByOne(batch);
          }
        }
      });
    this.waiting = flush;
    this.flushing = flush;
    return flush;
  }

  private async insertOneByOne(rows: RequestLogEntry[]): Promise<void> {
    for (const row of rows) {
      try {
        await this.insert([row]);
      } catch (err) {
        this.onError(err);
      }
    }
  }

  /** Stops the timer and writes every row queued, those logged while the last flushes ran too. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    do await this.flush();
    while (this.queue.length > 0);
  }
}

/** Requests of a channel the latency median is taken over. */
export const LATENCY_SAMPLE = 100;

/**
 * Median latency (ms) of each channel's last LATENCY_SAMPLE logged requests, null for a channel
 * with none. One indexed read per channel (`request_logs_channel_idx`, newest first).
 */
export async function channelLatencyP50(
  db: Kysely<Database>,
  channelIds: number[],
): Promise<Map<number, number | null>> {
  const out = new Map<number, number | null>();
  await Promise.all(
    channelIds.map(async (id) => {
      const rows = await db
        .selectFrom("request_logs")
        .select("latency_ms")
        .where("channel_id", "=", id)
        .orderBy("id", "desc")
        .limit(LATENCY_SAMPLE)
        .execute();
      const sorted = rows.map((r) => Number(r.latency_ms)).sort((a, b) => a - b);
      out.set(id, sorted.length === 0 ? null : (sorted[Math.floor((sorted.length - 1) / 2)] as number));
    }),
  );
  return out;
}
