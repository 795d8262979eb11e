// Users: balance, spend over time by model, and their ledger.
import type { Static } from "@sinclair/typebox";
import { useMemo, useState } from "preact/hooks";
import type { MeAnswer, SpendAnswer } from "../../../contracts/console.js";
import { get, query } from "../api.js";
import { TimeChart } from "../chart.js";
import { fmtQuota, Notice, Page, Pager, Select, useLoad, usePager } from "../ui.js";
import { type LedgerEntry, LedgerTable } from "./user-lists.js";

export type Me = Static<typeof MeAnswer>;

type Spend = Static<typeof SpendAnswer>;

export function MePage() {
  const me = useLoad(() => get<Me>("/console/api/me"), []);
  const [days, setDays] = useState("30");
  const spend = useLoad(() => get<Spend>(`/console/api/me/spend${query({ days, by: "model" })}`), [days]);
  const chart = useMemo(() => {
    const buckets = spend.data?.buckets ?? [];
    const keys = [...new Set(buckets.flatMap((b) => Object.keys(b.series)))].sort();
    return {
      x: buckets.map((b) => b.start),
      series: keys.map((k) => ({ label: k, values: buckets.map((b) => b.series[k] ?? 0) })),
    };
  }, [spend.data]);
  const pager = usePager();
  const ledger = useLoad(
    () => get<LedgerEntry[]>(`/console/api/me/ledger${query({ after: pager.after, limit: 25 })}`),
    [pager.after],
  );
  const next = ledger.data && ledger.data.length === 25 ? String(ledger.data[ledger.data.length - 1]?.id) : null;
  const u = me.data;
  return (
    <Page title="Balance and spend">
      <Notice error={me.error ?? spend.error} />
      <div class="stats">
        <div class="stat">
          <span>Balance</span>
          <strong data-testid="my-balance">{fmtQuota(u?.quota)}</strong>
        </div>
        <div class="stat">
          <span>Spent so far</span>
          <strong>{fmtQuota(u?.used_quota)}</strong>
        </div>
        <div class="stat">
          <span>Credit line</span>
          <strong>{fmtQuota(u?.credit_line)}</strong>
        </div>
      </div>
      <div class="filters">
        <Select
          label="Period"
          value={days}
          onChange={(e) => setDays(e.currentTarget.value)}
          options={[
            ["7", "Last 7 days"],
            ["30", "Last 30 days"],
            ["90", "Last 90 days"],
          ]}
        />
      </div>
      <TimeChart title="Spend by model" x={chart.x} series={chart.series} bars />
      <h2>Ledger</h2>
      <Notice error={ledger.error} />
      <LedgerTable rows={ledger.data} caption="My ledger, newest first" />
      <Pager pager={pager} nextCursor={next} />
    </Page>
  );
}
