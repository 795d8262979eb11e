// Operators: webhook deliveries, each failed or pending one with a retry.
import type { Static } from "@sinclair/typebox";
import type { WebhookDeliveryView } from "../../../contracts/records.js";
import { post } from "../api.js";
import { Filters, USER_ID_FILTER } from "../forms.js";
import { Pager, useFilteredList } from "../lists.js";
import { fmtTime, Notice, Page, Table, useAction } from "../ui.js";
import { taskColumn } from "./tasks.js";

export type Delivery = Static<typeof WebhookDeliveryView>;

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
          taskColumn(),
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
  const { pager, rows, next, form, apply } = useFilteredList<Delivery, { user_id: string }>(
    "/api/admin/webhooks",
    { user_id: "" },
    50,
  );
  return (
    <Page title="Webhook deliveries">
      <Filters onApply={apply} fields={[USER_ID_FILTER]} form={form} />
      <Notice error={rows.error} />
      <DeliveryTable rows={rows.data} onRetried={rows.reload} />
      <Pager pager={pager} nextCursor={next} />
    </Page>
  );
}
