// Operators: webhook deliveries, each failed or pending one with a retry.
import { useState } from "preact/hooks";
import { get, post, query } from "../api.js";
import { fmtTime, Input, Notice, Page, Pager, Table, useAction, useLoad, usePager } from "../ui.js";

export interface Delivery {
  id: number;
  user_id: number;
  task_id: string;
  url: string;
  event: string;
  status: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
}

export function DeliveryTable({ rows, onRetried }: { rows: Delivery[] | null; onRetried: () => void }) {
  const action = useAction();
  return (
    <>
      <Notice error={action.error} ok={action.ok} />
      <Table
        caption="Webhook deliveries"
        rows={rows}
        columns={[
          { title: "When", cell: (d) => fmtTime(d.created_at) },
          {
            title: "Task",
            cell: (d) => (
              <a class="mono" href={`/console/tasks/${encodeURIComponent(d.task_id)}`}>
                {d.task_id}
              </a>
            ),
          },
          { title: "Event", cell: (d) => d.event },
          { title: "Status", cell: (d) => <span class={`badge ${d.status}`}>{d.status}</span> },
          { title: "Attempts", numeric: true, cell: (d) => d.attempts },
          { title: "Last answer", cell: (d) => (d.last_error ? d.last_error : (d.last_status ?? "—")) },
          {
            title: "Retry",
            cell: (d) =>
              d.status === "delivered" ? (
                ""
              ) : (
                <button
                  type="button"
                  aria-label={`Retry delivery ${d.id}`}
                  disabled={action.busy}
                  onClick={() =>
                    action.run(async () => {
                      await post(`/api/admin/webhooks/${d.id}/retry`);
                      onRetried();
                      return `Delivery ${d.id} queued again.`;
                    })
                  }
                >
                  Retry
                </button>
              ),
          },
        ]}
      />
    </>
  );
}

export function WebhooksPage() {
  const [userId, setUserId] = useState("");
  const [filter, setFilter] = useState("");
  const pager = usePager();
  const rows = useLoad(
    () => get<Delivery[]>(`/api/admin/webhooks${query({ user_id: filter, after: pager.after, limit: 50 })}`),
    [filter, pager.after],
  );
  const next = rows.data && rows.data.length === 50 ? String(rows.data[rows.data.length - 1]?.id) : null;
  return (
    <Page title="Webhook deliveries">
      <form
        class="filters"
        aria-label="Filters"
        onSubmit={(e) => {
          e.preventDefault();
          pager.reset();
          setFilter(userId.trim());
        }}
      >
        <Input
          label="User id"
          name="user_id"
          inputMode="numeric"
          value={userId}
          onInput={(e) => setUserId(e.currentTarget.value)}
        />
        <button type="submit">Filter</button>
      </form>
      <Notice error={rows.error} />
      <DeliveryTable rows={rows.data} onRetried={rows.reload} />
      <Pager pager={pager} nextCursor={next} />
    </Page>
  );
}
