import pg from "pg";
import { taskIdOfRun } from "../../src/core/ids.js";
import { checkLedger, type LedgerFigures } from "../../test/reliability/ledger-checks.js";
import type { BalanceRow, ChargeRow, KeyCharges } from "./money-checks.js";

/** A PostgreSQL database of its own for one run; dropped at the end. */
export async function createRunDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `mg_reliability_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      try {
        await c.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

export interface TaskState {
  task_id: string;
  status: string;
  fail_reason: string;
}

/** Reads the store of the run directly (the source of truth for money). */
export class RunStore {
  private constructor(private readonly client: pg.Client) {}

  static async open(url: string): Promise<RunStore> {
    const client = new pg.Client({ connectionString: url });
    // The database is dropped at the end of a run, also when the run is cut short.
    client.on("error", () => {});
    await client.connect();
    return new RunStore(client);
  }

  async unfinishedTasks(): Promise<number> {
    const res = await this.client.query(
      "select count(*)::int as n from tasks where status not in ('SUCCESS', 'FAILURE')",
    );
    return res.rows[0].n as number;
  }

  /** Tasks the unsent sweeper failed: charged by an instance that died before sending them. */
  async sweptTasks(): Promise<number> {
    const res = await this.client.query(
      "select count(*)::int as n from tasks where fail_reason = 'the task was not sent to the upstream in time'",
    );
    return res.rows[0].n as number;
  }

  /** Who holds a task's lease now (the instance polling it, or copying its results), and its state. */
  async taskLease(taskId: string): Promise<{
    status: string;
    upstream_id: string | null;
    lease_owner: string | null;
    lease_until: number;
  } | null> {
    const res = await this.client.query(
      "select status, upstream_id, lease_owner, lease_until::bigint as lease_until from tasks where task_id = $1",
      [taskId],
    );
    const row = res.rows[0];
    return row ? { ...row, lease_until: Number(row.lease_until) } : null;
  }

  async tasks(): Promise<Map<string, TaskState>> {
    const res = await this.client.query("select task_id, status, fail_reason from tasks");
    return new Map(res.rows.map((r) => [r.task_id as string, r as TaskState]));
  }

  /** The ledger rules over every row of the store. */
  async ledgerFigures(): Promise<LedgerFigures> {
    // One client runs one query at a time.
    const users = await this.client.query("select id, quota::bigint as quota from users");
    const ledger = await this.client.query("select user_id, kind, amount::bigint as amount, reference from ledger");
    const tasks = await this.client.query("select task_id, user_id, status, quota::bigint as quota from tasks");
    const num = <T extends Record<string, unknown>>(rows: T[], fields: string[]) =>
      rows.map((r) => {
        const out: Record<string, unknown> = { ...r };
        for (const f of fields) out[f] = Number(r[f]);
        return out as T;
      });
    return checkLedger(
      num(users.rows, ["id", "quota"]) as any,
      num(ledger.rows, ["user_id", "amount"]) as any,
      num(tasks.rows, ["user_id", "quota"]) as any,
      { requireTerminal: true },
    );
  }

  /** Rows of the unique key that makes a second refund impossible, as a cross-check. */
  async duplicateLedgerKeys(): Promise<number> {
    const res = await this.client.query(
      "select count(*)::int as n from (select reference, kind from ledger group by reference, kind having count(*) > 1) d",
    );
    return res.rows[0].n as number;
  }

  async openCharges(): Promise<number> {
    const res = await this.client.query("select count(*)::int as n from charges where state = 'open'");
    return res.rows[0].n as number;
  }

  /** Every charge; the store keeps its times in unix seconds, turned into milliseconds here. */
  async charges(): Promise<ChargeRow[]> {
    const res = await this.client.query(
      "select reference, instance, state, created_at::bigint as created_at, closed_at::bigint as closed_at from charges",
    );
    return res.rows.map((r) => ({
      ...r,
      created_at: Number(r.created_at) * 1000,
      closed_at: r.closed_at === null ? null : Number(r.closed_at) * 1000,
    }));
  }

  async balances(): Promise<BalanceRow[]> {
    const res = await this.client.query(
      "select id, quota::bigint as quota, credit_line::bigint as credit_line from users",
    );
    return res.rows.map((r) => ({ id: Number(r.id), quota: Number(r.quota), credit_line: Number(r.credit_line) }));
  }

  /** Every Idempotency-Key with the charges of all its attempts (image and task references). */
  async keyCharges(): Promise<KeyCharges[]> {
    const keys = await this.client.query("select key, run_id, attempts from idempotency_keys where run_id is not null");
    const charges = await this.client.query(
      "select reference, state, coalesce(settled, held)::bigint as amount from charges where reference like 'image:%' or reference like 'task:%'",
    );
    const byReference = new Map(charges.rows.map((c) => [c.reference as string, c]));
    const byRun = new Map<string, Array<{ reference: string; state: string; amount: number }>>();
    for (const c of charges.rows) {
      const run = /^image:([^/]+)(\/\d+)?$/.exec(c.reference)?.[1];
      if (run) byRun.set(run, [...(byRun.get(run) ?? []), { ...c, amount: Number(c.amount) }]);
    }
    return keys.rows.map((k) => {
      const task = byReference.get(`task:${taskIdOfRun(k.run_id)}`);
      return {
        key: k.key as string,
        attempts: Number(k.attempts),
        charges: [
          ...(byRun.get(k.run_id) ?? []),
          ...(task ? [{ reference: task.reference, state: task.state, amount: Number(task.amount) }] : []),
        ],
      };
    });
  }

  close(): Promise<void> {
    return this.client.end();
  }
}
