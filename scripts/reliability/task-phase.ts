/**
 * The task phase of the run: MUSIC and LYRICS tasks of both families submitted across the instances (some
 * marked to fail upstream, some to be refused), one instance killed with SIGKILL part-way and
 * restarted. A submit cut by the kill is retried on another instance as a new call.
 */
import { callGateway } from "../../test/reliability/harness.js";
import type { Cluster } from "./cluster.js";
import type { ClientCall } from "./money-checks.js";
import type { Outcome, Submission } from "./outcome-checks.js";

/** How long before the kill an answer of the killed instance may still have had its send ahead of it. */
const SEND_WINDOW_MS = 2000;

export interface TaskPhaseOptions {
  tasks: number;
  users: Array<{ id: number; key: string }>;
  concurrency: number;
  /** Kill instance `instance` after this many submissions. */
  killAfter: number;
  instance: number;
  downMs: number;
  log(line: string): void;
}

export interface TaskPhaseResult {
  submissions: Submission[];
  outcomes: Outcome[];
  calls: ClientCall[];
  lostToKill: number;
  inFlightAtKill: number;
}

export async function runTaskPhase(cluster: Cluster, o: TaskPhaseOptions): Promise<TaskPhaseResult> {
  const submissions: Submission[] = Array.from({ length: o.tasks }, (_, i) => ({
    index: i,
    family: i % 2 === 0 ? "audioa" : "audiob",
    // One in five is a LYRICS task (both families, some of them marked to fail).
    action: i % 5 === 3 ? "LYRICS" : "MUSIC",
    marker: i % 40 === 7 ? "[refuse]" : i % 10 === 3 ? "[fail]" : "",
    key: (o.users[i % o.users.length] as { key: string }).key,
  }));
  const userOf = new Map(o.users.map((u) => [u.key, u.id]));
  const outcomes: Outcome[] = [];
  const calls: ClientCall[] = [];
  let next = 0;
  let sent = 0;
  let lostToKill = 0;
  let inFlight = 0;
  let inFlightAtKill = 0;
  let restart: Promise<unknown> | null = null;
  let killAt = Number.POSITIVE_INFINITY;
  // Answers from the instance the run kills: the send follows the answer, so one answered shortly
  // before the kill may have lost its send with the instance (the unsent sweeper then fails and
  // refunds it); its cost is 0 or what the upstream delivered.
  const answeredByVictim: Array<{ at: number; outcome: Outcome; call: ClientCall }> = [];

  const submitOne = async (s: Submission, attempt: number): Promise<Outcome> => {
    const { child, index: instance } = cluster.pick(s.index + attempt);
    const tag = `t${s.index}.${attempt}`;
    const call: ClientCall = {
      tag,
      userId: userOf.get(s.key) as number,
      kind: "task",
      priceName: `${s.family}:${s.action}`,
      ratio: 1,
      answered: false,
    };
    calls.push(call);
    inFlight += 1;
    try {
      const res = await callGateway(child.url, "POST", `/${s.family}/submit/${s.action}`, {
        headers: { authorization: `Bearer ${s.key}` },
        body: { prompt: `#${tag}# ${s.action === "LYRICS" ? "lyrics" : "song"} ${s.index} ${s.marker}`.trim() },
      });
      call.answered = res.status === 200;
      const outcome: Outcome = {
        submission: s,
        status: res.status,
        taskId: res.status === 200 ? res.body.data : null,
        code: res.body?.code,
      };
      if (instance === o.instance) answeredByVictim.push({ at: Date.now(), outcome, call });
      return outcome;
    } catch {
      // The instance died under this call: whatever it had charged is the sweeper's to refund.
      lostToKill += 1;
      if (attempt > 5) throw new Error(`submit ${s.index} failed ${attempt} times`);
      return submitOne(s, attempt + 1);
    } finally {
      inFlight -= 1;
    }
  };

  const worker = async () => {
    while (next < submissions.length) {
      const s = submissions[next++] as Submission;
      outcomes.push(await submitOne(s, 0));
      sent += 1;
      if (sent === o.killAfter && restart === null) {
        inFlightAtKill = inFlight;
        killAt = Date.now();
        restart = cluster.killAndRestart(o.instance, o.downMs, o.log);
      }
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, worker));
  await restart;
  for (const a of answeredByVictim) {
    if (a.at < killAt - SEND_WINDOW_MS) continue;
    a.outcome.fromKilledInstance = true;
    a.call.answered = false;
  }
  return { submissions, outcomes, calls, lostToKill, inFlightAtKill };
}
