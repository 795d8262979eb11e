// Operators: the request log, filtered and paged by the server.
import type { Static } from "@sinclair/typebox";
import type { RequestLogView } from "../../../contracts/records.js";
import { CHANNEL_ID_FILTER, type Field, Filters, USER_ID_FILTER } from "../forms.js";
import { Pager, useFilteredList } from "../lists.js";
import { fmtQuota, fmtTime, Notice, Page, Table } from "../ui.js";

type LogRow = Static<typeof RequestLogView>;

const LOG_FILTERS: Array<Field<"user_id" | "channel_id" | "model" | "status">> = [
  USER_ID_FILTER,
  CHANNEL_ID_FILTER,
  { field: "model", label: "Model", name: "model" },
  { field: "status", label: "HTTP status", name: "status", inputMode: "numeric" },
];

export function LogsPage() {
  const { pager, rows, next, form, apply } = useFilteredList<
    LogRow,
    Record<"user_id" | "channel_id" | "model" | "status", string>
  >("/api/admin/request-logs", { user_id: "", channel_id: "", model: "", status: "" }, 50);
  return (
    <Page title="Request log">
      <Filters onApply={apply} fields={LOG_FILTERS} form={form} />
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
