/**
 * The action phase of the run: the further audio actions of both families on the live cluster.
 * For each of a few task users and each family, a song (MUSIC) is made first; then every action
 * that works on a clip (EXTEND, COVER, the vocal and instrumental actions, STEMS, WAV,
 * MUSIC_VIDEO) is submitted on it, spread over the instances, and must end SUCCESS. Their charges
 * join the money checks as calls priced per call.
 * UPLOAD has a phase of its own (upload-phase.ts).
 */
import { callGateway } from "../../test/reliability/harness.js";
import type { Cluster } from "./cluster.js";
import type { ClientCall } from "./money-checks.js";
import type { Outcome, Submission } from "./outcome-checks.js";

type Family = "audioa" | "audiob";

/** The actions run on a song's clip (or an upload's), by family: VOCALS_SWAP is task-relay's only. */
const CLIP_ACTIONS: Record<Family, Array<{ action: string; body(clip: string): object }>> = {
  audioa: [],
  audiob: [],
};
for (const family of ["audioa", "audiob"] as const) {
  CLIP_ACTIONS[family].push(
    { action: "EXTEND", body: (clip) => ({ clip_id: clip, continue_at: 30, prompt: "[Bridge] further" }) },
    { action: "COVER", body: (clip) => ({ clip_id: clip, prompt: "a string quartet cover" }) },
    { action: "ADD_VOCALS", body: (clip) => ({ clip_id: clip, prompt: "[Verse] la la" }) },
    { action: "ADD_INSTRUMENTAL", body: (clip) => ({ clip_id: clip, tags: "piano" }) },
    { action: "STEMS", body: (clip) => ({ clip_id: clip, kind: "all" }) },
    { action: "WAV", body: (clip) => ({ clip_id: clip }) },
    { action: "MUSIC_VIDEO", body: (clip) => ({ clip_id: clip }) },
  );
}
CLIP_ACTIONS.audioa.push({ action: "VOCALS_SWAP", body: (clip) => ({ clip_id: clip, tags: "choir" }) });

/** Every action the phase submits, as `family:ACTION` price names (the run prices each of them). */
export const ACTION_PRICE_NAMES: string[] = (["audioa", "audiob"] as const).flatMap((family) =>
  CLIP_ACTIONS[family].map((a) => `${family}:${a.action}`),
);

export interface ActionPhaseOptions {
  users: Array<{ id: number; key: string }>;
  log(line: string): void;
}

export interface ActionPhaseResult {
  outcomes: Outcome[];
  calls: ClientCall[];
}

/** Runs the phase; a source (song or upload) that does not succeed in time is a violation. */
export async function runActionPhase(
  cluster: Cluster,
  o: ActionPhaseOptions,
): Promise<ActionPhaseResult & { violations: string[] }> {
  const outcomes: Outcome[] = [];
  const calls: ClientCall[] = [];
  const violations: string[] = [];
  let n = 0;

  const submit = async (user: { id: number; key: string }, family: Family, action: string, body: object) => {
    const index = 100_000 + n++;
    const submission: Submission = { index, family, action, marker: "", key: user.key };
    const call: ClientCall = {
      tag: `a${index}`,
      userId: user.id,
      kind: "action",
      priceName: `${family}:${action}`,
      ratio: 1,
      answered: false,
    };
    calls.push(call);
    const { child } = cluster.pick(index);
    const res = await callGateway(child.url, "POST", `/${family}/submit/${action}`, {
      headers: { authorization: `Bearer ${user.key}` },
      body,
    });
    call.answered = res.status === 200;
    const outcome: Outcome = {
      submission,
      status: res.status,
      taskId: res.status === 200 ? res.body.data : null,
      code: res.body?.code,
    };
    outcomes.push(outcome);
    return outcome;
  };

  /** The first clip id of a task once it has succeeded, or null when it does not in time. */
  const firstClip = async (user: { key: string }, family: Family, taskId: string | null): Promise<string | null> => {
    if (!taskId) return null;
    const until = Date.now() + 60_000;
    while (Date.now() < until) {
      const { child } = cluster.pick(n++);
      const res = await callGateway(child.url, "GET", `/${family}/fetch/${taskId}`, {
        headers: { authorization: `Bearer ${user.key}` },
      }).catch(() => null);
      const record = res?.body?.data;
      if (record?.status === "SUCCESS") return record.data?.clips?.[0]?.clip_id ?? null;
      if (record?.status === "FAILURE") return null;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    return null;
  };

  await Promise.all(
    o.users.flatMap((user) =>
      (["audioa", "audiob"] as const).map(async (family) => {
        // The song is made like any other (a MUSIC call the task phase's checks already price).
        const song = await submit(user, family, "MUSIC", { prompt: `[Verse] a song to work on, ${family}` });
        const clip = await firstClip(user, family, song.taskId);
        if (!clip) {
          violations.push(`actions: the ${family} song of user ${user.id} did not succeed in time`);
          return;
        }
        await Promise.all(CLIP_ACTIONS[family].map((a) => submit(user, family, a.action, a.body(clip))));
      }),
    ),
  );
  o.log(`${outcomes.length} action submissions answered (${ACTION_PRICE_NAMES.length} kinds of action)`);
  return { outcomes, calls, violations };
}
