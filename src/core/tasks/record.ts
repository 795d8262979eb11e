import type { Clip } from "./clips.js";

/** The fields a stored task and its public record have alike. */
interface TaskFields {
  id: number;
  created_at: number;
  updated_at: number;
  task_id: string;
  platform: string;
  user_id: number;
  group: string;
  channel_id: number;
  quota: number;
  action: string;
  status: string;
  fail_reason: string;
  submit_time: number;
  start_time: number;
  finish_time: number;
  progress: string;
}

/** The stored task as the renderer needs it (a plain row; JSON columns as text). */
export interface TaskView extends TaskFields {
  result_url: string | null;
  properties: string;
  data: string;
  upstream_id: string | null;
}

export interface TaskProperties {
  input: string;
  upstream_model_name: string;
  origin_model_name: string;
}

/** The task record of section 2.2, exactly these fields (`result_url` only after SUCCESS). */
export interface TaskRecord extends TaskFields {
  result_url?: string;
  properties: TaskProperties;
  data: Record<string, unknown>;
}

/** What the `data` column holds: the normalized clips once the task has succeeded. */
export interface StoredTaskData {
  clips?: Clip[];
}

/** A stored JSON object's text as an object: anything else (bad JSON, an array, null) as an empty one. */
export function parseObject(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text);
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

function asText(v: unknown): string {
  return typeof v === "string" ? v : "";
}

/**
 * The record's `data`, derived from the state so that a terminal record can never carry a
 * payload of an earlier state:
 * - SUCCESS audioa: `{clips, progress, quota}` (quota as text); SUCCESS audiob: `{clips}`;
 * - FAILURE: `{progress, status, task_id: "", fail_reason}`;
 * - IN_PROGRESS: `{progress, status, task_id}` with the upstream-side id;
 * - NOT_START, SUBMITTED, QUEUED: `{progress, status, task_id: ""}`.
 */
export function recordData(t: TaskView): Record<string, unknown> {
  if (t.status === "SUCCESS") {
    const stored = parseObject(t.data) as StoredTaskData;
    const clips = Array.isArray(stored.clips) ? stored.clips : [];
    return t.platform === "audioa" ? { clips, progress: t.progress, quota: String(t.quota) } : { clips };
  }
  if (t.status === "FAILURE") {
    return { progress: t.progress, status: t.status, task_id: "", fail_reason: t.fail_reason };
  }
  return {
    progress: t.progress,
    status: t.status,
    task_id: t.status === "IN_PROGRESS" ? (t.upstream_id ?? "") : "",
  };
}

/** Renders a stored task as the public record of section 2.2. */
export function renderTaskRecord(t: TaskView): TaskRecord {
  const props = parseObject(t.properties);
  const record: TaskRecord = {
    id: Number(t.id),
    created_at: Number(t.created_at),
    updated_at: Number(t.updated_at),
    task_id: t.task_id,
    platform: t.platform,
    user_id: Number(t.user_id),
    group: t.group,
    channel_id: Number(t.channel_id),
    quota: Number(t.quota),
    action: t.action,
    status: t.status,
    fail_reason: t.fail_reason,
    submit_time: Number(t.submit_time),
    start_time: Number(t.start_time),
    finish_time: Number(t.finish_time),
    progress: t.progress,
    properties: {
      input: asText(props.input),
      upstream_model_name: asText(props.upstream_model_name),
      origin_model_name: asText(props.origin_model_name),
    },
    data: recordData(t),
  };
  if (t.status === "SUCCESS") {
    // Keep the document's field order: result_url sits between fail_reason and submit_time.
    const { submit_time, start_time, finish_time, progress, properties, data, ...head } = record;
    return {
      ...head,
      result_url: t.result_url ?? "",
      submit_time,
      start_time,
      finish_time,
      progress,
      properties,
      data,
    };
  }
  return record;
}
