// Operators: the tasks browser (filters and paging done by the server) and one task's full
// record with its upstream history.
import type { Static } from "@sinclair/typebox";
import type { AdminTaskView } from "../../../contracts/records.js";
import { get } from "../api.js";
import {
  Card,
  Filters,
  fmtQuota,
  fmtTime,
  Input,
  Notice,
  Page,
  Pager,
  Select,
  Table,
  useFilteredList,
  useLoad,
} from "../ui.js";
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

export function TaskTable({ rows }: { rows: AdminTask[] | null }) {
  return (
    <Table
      caption="Tasks"
      rows={rows}
      columns={[
        {
          title: "Task",
          cell: (t) => (
            <a class="mono" href={`/console/tasks/${encodeURIComponent(t.task_id)}`}>
              {t.task_id}
            </a>
          ),
        },
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
  const { pager, rows, next, draft, set, apply } = useFilteredList<AdminTask, Record<string, string>>(
    "/api/admin/tasks",
    { platform: "", status: "", user_id: "", channel_id: "" },
    PAGE,
  );
  return (
    <Page title="Tasks">
      <Filters onApply={apply}>
        <Select
          label="Family"
          value={draft.platform}
          onChange={set("platform")}
          options={[
            ["", "Any family"],
            ["audioa", "audioa"],
            ["audiob", "audiob"],
          ]}
        />
        <Select label="State" value={draft.status} onChange={set("status")} options={STATES} />
        <Input label="User id" name="user_id" inputMode="numeric" value={draft.user_id} onInput={set("user_id")} />
        <Input
          label="Channel id"
          name="channel_id"
          inputMode="numeric"
          value={draft.channel_id}
          onInput={set("channel_id")}
        />
      </Filters>
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
