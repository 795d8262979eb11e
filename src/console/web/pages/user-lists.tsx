// One user's ledger, tokens, tasks and webhook deliveries, as tabs on the user's page.
import type { Static } from "@sinclair/typebox";
import { useState } from "preact/hooks";
import type { TokenView } from "../../../contracts/admin.js";
import type { LedgerEntryView } from "../../../contracts/records.js";
import { get, query } from "../api.js";
import { Pager, usePaged } from "../lists.js";
import { fmtQuota, fmtTime, Notice, Table, useLoad } from "../ui.js";
import { type AdminTask, TaskTable } from "./tasks.js";
import { TOKEN_COLUMNS } from "./tokens.js";
import { type Delivery, DeliveryTable } from "./webhooks.js";

export type LedgerEntry = Static<typeof LedgerEntryView>;

type Token = TokenView;

const TABS = ["Ledger", "Tokens", "Tasks", "Webhook deliveries"] as const;

export function LedgerTable({ rows, caption }: { rows: LedgerEntry[] | null; caption: string }) {
  return (
    <Table
      caption={caption}
      rows={rows}
      columns={[
        { title: "When", cell: (r) => fmtTime(r.created_at) },
        { title: "Kind", cell: (r) => r.kind },
        {
          title: "Amount",
          numeric: true,
          cell: (r) => <span class={r.amount < 0 ? "neg" : "pos"}>{fmtQuota(r.amount)}</span>,
        },
        { title: "Reference", cell: (r) => <span class="mono">{r.reference ?? "—"}</span> },
        { title: "Note", cell: (r) => r.note ?? "" },
      ]}
    />
  );
}

type Tab = (typeof TABS)[number];

function moveTab(e: KeyboardEvent, tab: Tab, setTab: (t: Tab) => void) {
  const step = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
  if (step === 0) return;
  e.preventDefault();
  const next = (TABS.indexOf(tab) + step + TABS.length) % TABS.length;
  setTab(TABS[next] ?? tab);
  document.getElementById(`tab-${next}`)?.focus();
}

export function UserLists({ id, stamp }: { id: string; stamp: unknown }) {
  const [tab, setTab] = useState<Tab>("Ledger");
  return (
    <section class="card">
      {/* Arrow keys move between the tabs; Tab moves on into the panel. */}
      <div role="tablist" aria-label="The user's records" class="tabs" onKeyDown={(e) => moveTab(e, tab, setTab)}>
        {TABS.map((t, i) => (
          <button
            key={t}
            id={`tab-${i}`}
            type="button"
            role="tab"
            aria-selected={tab === t}
            aria-controls="user-tabpanel"
            tabIndex={tab === t ? 0 : -1}
            onClick={() => setTab(t)}
          >
            {t}
          </button>
        ))}
      </div>
      <div role="tabpanel" id="user-tabpanel" aria-labelledby={`tab-${TABS.indexOf(tab)}`}>
        {tab === "Ledger" ? <Ledger id={id} stamp={stamp} /> : null}
        {tab === "Tokens" ? <Tokens id={id} /> : null}
        {tab === "Tasks" ? <Tasks id={id} /> : null}
        {tab === "Webhook deliveries" ? <Deliveries id={id} /> : null}
      </div>
    </section>
  );
}

function Ledger({ id, stamp }: { id: string; stamp: unknown }) {
  const { pager, rows, next } = usePaged(
    (before) => get<LedgerEntry[]>(`/api/admin/users/${id}/ledger${query({ before, limit: 25 })}`),
    [id, stamp],
    25,
  );
  return (
    <>
      <Notice error={rows.error} />
      <LedgerTable rows={rows.data} caption="Ledger, newest first" />
      <Pager pager={pager} nextCursor={next} />
    </>
  );
}

function Tokens({ id }: { id: string }) {
  const rows = useLoad(() => get<Token[]>(`/api/admin/users/${id}/tokens`), [id]);
  return (
    <>
      <Notice error={rows.error} />
      <Table caption="Tokens" rows={rows.data} columns={TOKEN_COLUMNS} />
    </>
  );
}

function Tasks({ id }: { id: string }) {
  const { pager, rows, next } = usePaged(
    (after) => get<AdminTask[]>(`/api/admin/tasks${query({ user_id: id, after, limit: 25 })}`),
    [id],
    25,
  );
  return (
    <>
      <Notice error={rows.error} />
      <TaskTable rows={rows.data} />
      <Pager pager={pager} nextCursor={next} />
    </>
  );
}

function Deliveries({ id }: { id: string }) {
  const rows = useLoad(() => get<Delivery[]>(`/api/admin/webhooks${query({ user_id: id, limit: 50 })}`), [id]);
  return (
    <>
      <Notice error={rows.error} />
      <DeliveryTable rows={rows.data} onRetried={rows.reload} />
    </>
  );
}
