// Operators: the request log, filtered and paged by the server.
import { useState } from "preact/hooks";
import { get, query } from "../api.js";
import { fmtQuota, fmtTime, Input, Notice, Page, Pager, Table, useLoad, usePager } from "../ui.js";

interface LogRow {
  id: number;
  created_at: number;
  request_id: string;
  user_id: number | null;
  channel_id: number | null;
  surface: string;
  model: string;
  quota: number;
  latency_ms: number;
  status: number;
  error: string | null;
}

export function LogsPage() {
  const [draft, setDraft] = useState({ user_id: "", channel_id: "", model: "", status: "" });
  const [filters, setFilters] = useState(draft);
  const pager = usePager();
  const rows = useLoad(
    () => get<LogRow[]>(`/api/admin/request-logs${query({ ...filters, after: pager.after, limit: 50 })}`),
    [filters, pager.after],
  );
  const next = rows.data && rows.data.length === 50 ? String(rows.data[rows.data.length - 1]?.id) : null;
  const set = (k: keyof typeof draft) => (e: { currentTarget: HTMLInputElement }) =>
    setDraft({ ...draft, [k]: e.currentTarget.value.trim() });
  return (
    <Page title="Request log">
      <form
        class="filters"
        aria-label="Filters"
        onSubmit={(e) => {
          e.preventDefault();
          pager.reset();
          setFilters(draft);
        }}
      >
        <Input label="User id" name="user_id" inputMode="numeric" value={draft.user_id} onInput={set("user_id")} />
        <Input
          label="Channel id"
          name="channel_id"
          inputMode="numeric"
          value={draft.channel_id}
          onInput={set("channel_id")}
        />
        <Input label="Model" name="model" value={draft.model} onInput={set("model")} />
        <Input label="HTTP status" name="status" inputMode="numeric" value={draft.status} onInput={set("status")} />
        <button type="submit">Filter</button>
      </form>
      <Notice error={rows.error} />
      <Table
        caption="Requests, newest first"
        rows={rows.data}
        columns={[
          { title: "When", cell: (r) => fmtTime(r.created_at) },
          { title: "Surface", cell: (r) => r.surface },
          { title: "Model", cell: (r) => r.model },
          { title: "User", numeric: true, cell: (r) => r.user_id ?? "—" },
          { title: "Channel", numeric: true, cell: (r) => r.channel_id ?? "—" },
          {
            title: "Status",
            numeric: true,
            cell: (r) => <span class={r.status >= 400 ? "neg" : undefined}>{r.status}</span>,
          },
          { title: "Latency", numeric: true, cell: (r) => `${r.latency_ms} ms` },
          { title: "Charge", numeric: true, cell: (r) => fmtQuota(r.quota) },
          { title: "Error", cell: (r) => r.error ?? "" },
        ]}
      />
      <Pager pager={pager} nextCursor={next} />
    </Page>
  );
}
