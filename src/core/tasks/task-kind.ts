import type { TSchema } from "@sinclair/typebox";
import type { SourceClipField } from "./action-bodies.js";
import type { TaskPlatform } from "./families.js";
import type { TaskBody } from "./request-bodies.js";

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
 * One kind of task: a family's action. Everything the gateway needs to accept one lives here;
 * the upstream adapters say which kinds their protocol can do (see upstreams/task-adapters.ts).
 */
export interface TaskKind {
  /** With `action`, the kind's price key: its price is the row `task:<family>:<action>`. */
  family: TaskPlatform;
  action: string;
  /** Types and bounds of the known fields; other fields are let through. */
  schema: TSchema;
  /** The rules the schema cannot say (fields that depend on each other); throws a 400 naming the field. */
  check(body: TaskBody): void;
  /** Closed until the operator names it in `tasks.enabledActions` (`ACTION` or `family:ACTION`). */
  closedByDefault: boolean;
  /**
   * The body fields that may name the task's source: a clip of one of the caller's succeeded
   * tasks (`clip_id`) or the clip of one of the caller's uploads (`upload_id`). A source that is
   * not the caller's is a 404, never a call upstream. Absent when the kind works on no earlier clip.
   */
  sourceClipFields?: readonly SourceClipField[];
  /** The model the client asked for, or the family default (kinds with a source clip take its model). */
  originModel(body: TaskBody, sourceClipModel: string): string;
  /** The text shown as `properties.input`. */
  input(body: TaskBody): string;
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
  pricing?(body: TaskBody): KindPricing;
  /** The model channels must serve to take the task; absent: the family word. */
  channelModel?(body: TaskBody): string;
}
