import type { TSchema } from "@sinclair/typebox";
import type { TaskPlatform } from "./families.js";

/**
 * A client's task body once its kind's schema let it through (unknown fields included). Each kind
 * names the fields it knows by its own body type, beside its schema (core/tasks/kinds/).
 */
export type TaskBody = object;

/** The fields that may name a source clip: a clip of a succeeded task, or an upload's clip. */
export type SourceClipField = "clip_id" | "upload_id";

/** What a kind's results are: clips with audio (or video), lyric sheets without audio, or a video. */
export type KindResults = "audio" | "lyrics" | "video";

/** What a task of a kind costs: `units` times the price row `task:<family>:<name>`. */
export interface KindPricing {
  name: string;
  units: number;
  /** The body field that chose the row: an unpriced row is a 400 naming it (an unknown model). */
  field: string;
}

/**
 * One kind of task: a family's action, over bodies of type `B`. Everything the gateway needs to
 * accept one lives here; the upstream adapters say which kinds their protocol can do (see
 * upstreams/registry.ts).
 */
export interface TaskKind<B extends TaskBody = TaskBody> {
  /** With `action`, the kind's price key: its price is the row `task:<family>:<action>`. */
  family: TaskPlatform;
  action: string;
  /** Types and bounds of the known fields; other fields are let through. */
  schema: TSchema;
  /** The rules the schema cannot say (fields that depend on each other); throws a 400 naming the field. */
  check(body: B): void;
  /** Closed until the operator names it in `tasks.enabledActions` (`ACTION` or `family:ACTION`). */
  closedByDefault: boolean;
  /**
   * The body fields that may name the task's source: a clip of one of the caller's succeeded
   * tasks (`clip_id`) or the clip of one of the caller's uploads (`upload_id`). A source that is
   * not the caller's is a 404, never a call upstream. Absent when the kind works on no earlier clip.
   */
  sourceClipFields?: readonly SourceClipField[];
  /** The model the client asked for, or the family default (kinds with a source clip take its model). */
  originModel(body: B, sourceClipModel: string): string;
  /** The text shown as `properties.input`. */
  input(body: B): string;
  /** The name of the operation at the upstream (task-relay: the path word after /submit/). */
  upstreamOperation: string;
  /** The field of the upstream body that carries the (mapped) model; absent when none is sent. */
  upstreamModelField?: string;
  /** What the results are; a success without any is a failure. */
  results: KindResults;
  /**
   * The body field holding the URL of a file the gateway brings in (fetched, checked, stored)
   * before it accepts the task; the upstream gets the gateway's URL of the stored copy instead.
   */
  intakeField?: "url";
  /**
   * The price row and units of one task; absent: the row `task:<family>:<action>`, one unit, and
   * a missing row means the action is unavailable.
   */
  pricing?(body: B): KindPricing;
  /** The model channels must serve to take the task; absent: the family word. */
  channelModel?(body: B): string;
}

/** What a kind of an audio family says of itself; the rest is its defaults. */
type AudioKindSpec<B extends TaskBody> = Pick<
  TaskKind<B>,
  "family" | "action" | "schema" | "check" | "originModel" | "input"
> &
  Partial<TaskKind<B>>;

/**
 * A kind of an audio family: open by default, sent upstream under its own name, with audio
 * results, unless `spec` says otherwise.
 */
export function audioKind<B extends TaskBody>(spec: AudioKindSpec<B>): TaskKind<B> {
  return { closedByDefault: false, upstreamOperation: spec.action, results: "audio", ...spec };
}

/** The model of a kind that works on a clip: the source clip's. */
export function fromSourceClip(_body: TaskBody, sourceClipModel: string): string {
  return sourceClipModel;
}
