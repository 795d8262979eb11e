// Operators: the tasks browser (filters and paging done by the server) and one task's full
// record with its upstream history.
import type { Static } from "@sinclair/typebox";
import type { AdminTaskView } from "../../../contracts/records.js";
import { get } from "../api.js";
import { CHANNEL_ID_FILTER, type Field, Filters, USER_ID_FILTER } from "../forms.js";
import { Pager, useFilteredList } from "../lists.js";
import { Card, type Column, fmtQuota, fmtTime, Notice, Page, Table, useLoad } from "../ui.js";
import { MediaView, RecordList } from "./record.js";

export type AdminTask = Static<typeof AdminTaskView>;

const STATES: Array<[string, string]> = [
  ["", "Any state"],
  ["NOT_START", "NOT_START"],
  ["SUBMITTED", "SUBMITTED"],
  ["QUEUED", "QUEUED"],
  ["IN_PROGRESS", "IN_PROGRESS"],
  ["SUCCESS", "SUCCESS"],
  ["FAILURE", "FAILURE"],
];
const PAGE = 50;

/** The task families, as a filter's choices. */
export const FAMILIES: Array<[string, string]> = [
  ["", "Any family"],
  ["audioa", "audioa"],
  ["audiob", "audiob"],
];

const TASK_FILTERS: Array<Field<"platform" | "status" | "user_id" | "channel_id">> = [
  { field: "platform", kind: "select", label: "Family", options: FAMILIES },
  { field: "status", kind: "select", label: "State", options: STATES },
  USER_ID_FILTER,
  CHANNEL_ID_FILTER,
];

/** The column linking each row's task to the task's page, under `base`. */
export function taskColumn<T extends { task_id: string }>(base = "/console/tasks"): Column<T> {
  return {
    title: "Task",
    cell: (t) => (
      <a class="mono" href={`${base}/${encodeURIComponent(t.task_id)}`}>
        {t.task_id}
      </a>
    ),
  };
}

export function TaskTable({ rows }: { rows: AdminTask[] | null }) {
  return (
    <Table
      caption="Tasks"
      rows={rows}
      columns={[
        taskColumn(),
        { title: "Family", cell: (t) => t.platform },
        { title: "Action", cell: (t) => t.action },
        { title: "State", cell: (t) => <span class={`badge ${t.status.toLowerCase()}`}>{t.status}</span> },
        { title: "User", numeric: true, cell: (t) => <a href={`/console/users/${t.user_id}`}>{t.user_id}</a> },
        { title: "Channel", numeric: true, cell: (t) => t.channel_id },
        { title: "Charge", numeric: true, cell: (t) => fmtQuota(t.quota) },
        { title: "Submitted", cell: (t) => fmtTime(t.submit_time) },
      ]}
    />
  );
}

export function TasksPage() {
  const { pager, rows, next, form, apply } = useFilteredList<
    AdminTask,
    Record<"platform" | "status" | "user_id" | "channel_id", string>
  >("/api/admin/tasks", { platform: "", status: "", user_id: "", channel_id: "" }, PAGE);
  return (
    <Page title="Tasks">
      <Filters onApply={apply} fields={TASK_FILTERS} form={form} />
      <Notice error={rows.error} />
      <TaskTable rows={rows.data} />
      <Pager pager={pager} nextCursor={next} />
    </Page>
  );
}

interface TaskDetail extends Record<string, unknown> {
  history?: Array<{ at: number; event: string; detail: unknown }>;
}

export function TaskPage({ taskId }: { taskId: string }) {
  const task = useLoad(() => get<TaskDetail>(`/api/admin/tasks/${encodeURIComponent(taskId)}`), [taskId]);
  const { history, ...record } = task.data ?? {};
  return (
    <Page title={`Task ${taskId}`}>
      <Notice error={task.error} />
      <Card title="Result">{task.data ? <MediaView record={record} /> : <p>Loading…</p>}</Card>
      <Card title="Record">
        <RecordList record={task.data ? record : null} />
      </Card>
      <Card title="Upstream history">
        <Table
          caption="Upstream history"
          rows={history ?? (task.data ? [] : null)}
          columns={[
            { title: "When", cell: (h) => fmtTime(h.at > 1e11 ? Math.floor(h.at / 1000) : h.at) },
            { title: "Event", cell: (h) => h.event },
            {
              title: "Detail",
              cell: (h) => (
                <code class="wrap">{typeof h.detail === "string" ? h.detail : JSON.stringify(h.detail)}</code>
              ),
            },
          ]}
        />
      </Card>
    </Page>
  );
}
