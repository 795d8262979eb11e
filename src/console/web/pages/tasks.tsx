// Operators: the tasks browser (filters and paging done by the server) and one task's full
// record with its upstream history.
import { useState } from "preact/hooks";
import { get, query } from "../api.js";
import { Card, fmtQuota, fmtTime, Input, Notice, Page, Pager, Select, Table, useLoad, usePager } from "../ui.js";
import { MediaView, RecordList } from "./record.js";

export interface AdminTask {
  id: number;
  task_id: string;
  platform: string;
  user_id: number;
  channel_id: number;
  action: string;
  status: string;
  quota: number;
  fail_reason: string;
  progress: string;
  submit_time: number;
  finish_time: number;
}

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
  const [draft, setDraft] = useState({ platform: "", status: "", user_id: "", channel_id: "" });
  const [filters, setFilters] = useState(draft);
  const pager = usePager();
  const rows = useLoad(
    () => get<AdminTask[]>(`/api/admin/tasks${query({ ...filters, after: pager.after, limit: PAGE })}`),
    [filters, pager.after],
  );
  const next = rows.data && rows.data.length === PAGE ? String(rows.data[rows.data.length - 1]?.id) : null;
  const set = (k: keyof typeof draft) => (e: { currentTarget: HTMLInputElement | HTMLSelectElement }) =>
    setDraft({ ...draft, [k]: e.currentTarget.value.trim() });
  return (
    <Page title="Tasks">
      <form
        class="filters"
        aria-label="Filters"
        onSubmit={(e) => {
          e.preventDefault();
          pager.reset();
          setFilters(draft);
        }}
      >
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
        <button type="submit">Filter</button>
      </form>
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
