// Users: their tasks (with previews and players), one task's record, and their images.
import type { Static } from "@sinclair/typebox";
import { useState } from "preact/hooks";
import type { ImageItem } from "../../../contracts/console.js";
import { get, query } from "../api.js";
import { Card, fmtTime, Notice, Page, Pager, Select, Table, useLoad, usePager } from "../ui.js";
import { MediaView, RecordList } from "./record.js";

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

export function MyTasksPage() {
  const [status, setStatus] = useState("");
  const [platform, setPlatform] = useState("");
  const pager = usePager();
  const rows = useLoad(
    () => get<OwnTask[]>(`/console/api/me/tasks${query({ status, platform, after: pager.after, limit: 25 })}`),
    [status, platform, pager.after],
  );
  const list = rows.data;
  const last = list?.[list.length - 1];
  const next = list && list.length === 25 && last ? String(last.id ?? last.task_id) : null;
  return (
    <Page title="My tasks">
      <div class="filters">
        <Select
          label="Family"
          value={platform}
          onChange={(e) => {
            pager.reset();
            setPlatform(e.currentTarget.value);
          }}
          options={[
            ["", "Any family"],
            ["audioa", "audioa"],
            ["audiob", "audiob"],
          ]}
        />
        <Select
          label="State"
          value={status}
          onChange={(e) => {
            pager.reset();
            setStatus(e.currentTarget.value);
          }}
          options={[
            ["", "Any state"],
            ["SUCCESS", "SUCCESS"],
            ["FAILURE", "FAILURE"],
            ["IN_PROGRESS", "IN_PROGRESS"],
            ["SUBMITTED", "SUBMITTED"],
            ["NOT_START", "NOT_START"],
          ]}
        />
      </div>
      <Notice error={rows.error} />
      <Table
        caption="My tasks"
        rows={list}
        columns={[
          {
            title: "Task",
            cell: (t) => (
              <a class="mono" href={`/console/me/tasks/${encodeURIComponent(t.task_id)}`}>
                {t.task_id}
              </a>
            ),
          },
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
  const pager = usePager();
  const rows = useLoad(
    () => get<Image[]>(`/console/api/me/images${query({ after: pager.after, limit: 24 })}`),
    [pager.after],
  );
  const list = rows.data;
  const next = list && list.length === 24 ? String(list[list.length - 1]?.id) : null;
  return (
    <Page title="My images">
      <Notice error={rows.error} />
      {list === null ? <p>Loading…</p> : list.length === 0 ? <p>No images yet: make one in the playground.</p> : null}
      <ul class="gallery" aria-label="My images">
        {(list ?? []).map((img) => (
          <li key={img.id}>
            <figure>
              <a href={img.url} target="_blank" rel="noreferrer">
                <img src={img.url} alt={`Made with ${img.model}`} width={200} height={200} loading="lazy" />
              </a>
              <figcaption>
                {img.model} · {fmtTime(img.created_at)}
              </figcaption>
            </figure>
          </li>
        ))}
      </ul>
      <Pager pager={pager} nextCursor={next} />
    </Page>
  );
}
