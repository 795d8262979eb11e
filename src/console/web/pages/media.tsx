// Users: their tasks (with previews and players), one task's record, and their images.
import type { Static } from "@sinclair/typebox";
import type { ImageItem } from "../../../contracts/console.js";
import { get, query } from "../api.js";
import { Choices, type Field, useForm } from "../forms.js";
import { Gallery, Pager, usePaged } from "../lists.js";
import { Card, fmtTime, Notice, Page, Table, useLoad } from "../ui.js";
import { MediaView, RecordList } from "./record.js";
import { FAMILIES, taskColumn } from "./tasks.js";

interface OwnTask {
  task_id: string;
  action: string;
  status: string;
  platform?: string;
  progress?: string;
  submit_time: number;
  finish_time?: number;
  fail_reason?: string;
  data?: unknown;
  result_url?: string;
  id?: number;
}

type Image = Static<typeof ImageItem>;

const MY_TASK_FILTERS: Array<Field<"platform" | "status">> = [
  { field: "platform", kind: "select", label: "Family", options: FAMILIES },
  {
    field: "status",
    kind: "select",
    label: "State",
    options: [
      ["", "Any state"],
      ["SUCCESS", "SUCCESS"],
      ["FAILURE", "FAILURE"],
      ["IN_PROGRESS", "IN_PROGRESS"],
      ["SUBMITTED", "SUBMITTED"],
      ["NOT_START", "NOT_START"],
    ],
  },
];

export function MyTasksPage() {
  const filters = useForm({ platform: "", status: "" });
  const { status, platform } = filters.values;
  const { pager, rows, next } = usePaged(
    (after) => get<OwnTask[]>(`/console/api/me/tasks${query({ status, platform, after, limit: 25 })}`),
    [status, platform],
    25,
    (t) => t.id ?? t.task_id,
  );
  const list = rows.data;
  return (
    <Page title="My tasks">
      <Choices
        fields={MY_TASK_FILTERS}
        form={{
          values: filters.values,
          // A changed filter starts again from the first page.
          set: (k) => (e) => {
            pager.reset();
            filters.set(k)(e);
          },
        }}
      />
      <Notice error={rows.error} />
      <Table
        caption="My tasks"
        rows={list}
        columns={[
          taskColumn("/console/me/tasks"),
          { title: "Action", cell: (t) => t.action },
          { title: "State", cell: (t) => <span class={`badge ${t.status.toLowerCase()}`}>{t.status}</span> },
          { title: "Submitted", cell: (t) => fmtTime(t.submit_time) },
          { title: "Preview", cell: (t) => <MediaView record={t} compact /> },
        ]}
      />
      <Pager pager={pager} nextCursor={next} />
    </Page>
  );
}

export function MyTaskPage({ taskId }: { taskId: string }) {
  const task = useLoad(
    () => get<Record<string, unknown>>(`/console/api/me/tasks/${encodeURIComponent(taskId)}`),
    [taskId],
  );
  return (
    <Page title={`Task ${taskId}`}>
      <Notice error={task.error} />
      <Card title="Result">{task.data ? <MediaView record={task.data} /> : <p>{task.error ? "" : "Loading…"}</p>}</Card>
      <Card title="Record">{task.error ? null : <RecordList record={task.data} />}</Card>
    </Page>
  );
}

export function MyImagesPage() {
  const { pager, rows, next } = usePaged(
    (after) => get<Image[]>(`/console/api/me/images${query({ after, limit: 24 })}`),
    [],
    24,
  );
  return (
    <Page title="My images">
      <Notice error={rows.error} />
      <Gallery
        label="My images"
        rows={rows.data}
        empty="No images yet: make one in the playground."
        keyOf={(img) => img.id}
        item={(img) => (
          <figure>
            <a href={img.url} target="_blank" rel="noreferrer">
              <img src={img.url} alt={`Made with ${img.model}`} width={200} height={200} loading="lazy" />
            </a>
            <figcaption>
              {img.model} · {fmtTime(img.created_at)}
            </figcaption>
          </figure>
        )}
        pager={pager}
        next={next}
      />
    </Page>
  );
}
