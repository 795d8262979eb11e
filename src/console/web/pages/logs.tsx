// Operators: the request log, filtered and paged by the server.
import type { Static } from "@sinclair/typebox";
import type { RequestLogView } from "../../../contracts/records.js";
import { Filters, fmtQuota, fmtTime, Input, Notice, Page, Pager, Table, useFilteredList } from "../ui.js";

type LogRow = Static<typeof RequestLogView>;

export function LogsPage() {
  const { pager, rows, next, draft, set, apply } = useFilteredList<LogRow, Record<string, string>>(
    "/api/admin/request-logs",
    { user_id: "", channel_id: "", model: "", status: "" },
    50,
  );
  return (
    <Page title="Request log">
      <Filters onApply={apply}>
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
      </Filters>
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
