/**
 * The video phase of the run: videos created through `/v1/videos` on the instances in turn (one in
 * five marked to fail upstream), polled to their end on the instances in turn, and the content of
 * each completed one downloaded from an instance other than the one that created it, which must
 * give the simulator's bytes. One video's content trickles out slowly; while an instance is
 * copying it to storage, that instance is killed with SIGKILL (and restarted): another instance
 * must finish the video (completed, charged once) or end it refunded.
 */
import { simVideoFile } from "../../src/simulator/openai-videos-content.js";
import type { VideoDownload } from "../../src/simulator/server.js";
import { callGateway } from "../../test/reliability/harness.js";
import type { Cluster } from "./cluster.js";
import type { ClientCall } from "./money-checks.js";
import type { Child } from "./processes.js";
import type { RunStore } from "./store-checks.js";

export const VIDEO_MODEL = "sora-2";
/** The price row of the run's video model (per second of video). */
export const VIDEO_PRICE_NAME = `video:${VIDEO_MODEL}`;
const SECONDS = ["4", "8", "12"] as const;
const SIZES = ["720x1280", "1280x720", "1024x1792", "1792x1024"] as const;
/**
 * How long each file of a slow video takes to send. A copy fetches three (video, thumbnail,
 * spritesheet), so the whole copy (2.4 s) stays under the run's 3 s task lease: no other instance
 * takes the video over while its copier lives.
 */
const SLOW_CONTENT_MS = 800;

export interface VideoPhaseOptions {
  users: Array<{ id: number; key: string }>;
  videos: number;
  simUrl: string;
  store: RunStore;
  downMs: number;
  log(line: string): void;
}

interface RunVideo {
  index: number;
  user: { id: number; key: string };
  prompt: string;
  seconds: string;
  size: string;
  fails: boolean;
  slow: boolean;
  creator: number;
  id: string | null;
  final: string | null;
  call: ClientCall;
}

export interface VideoPhaseResult {
  calls: ClientCall[];
  violations: string[];
  figures: Array<[string, string, string]>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `work` over `items`, `limit` at a time. */
async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

export async function runVideoPhase(cluster: Cluster, o: VideoPhaseOptions): Promise<VideoPhaseResult> {
  const violations: string[] = [];
  let turn = 0;
  const videos: RunVideo[] = Array.from({ length: o.videos }, (_, index) => {
    const fails = index % 5 === 4;
    // The first two videos that do not fail are slow to download: the first is the one copied under a kill.
    const slow = !fails && index < 3;
    const tag = `v${index}`;
    const marker = `${fails ? " [fail]" : ""}${slow ? ` [slowcontent=${SLOW_CONTENT_MS}]` : ""}`;
    const seconds = SECONDS[index % SECONDS.length] as string;
    const user = o.users[index % o.users.length] as { id: number; key: string };
    return {
      index,
      user,
      prompt: `#${tag}# a paper boat on a canal, take ${index}${marker}`,
      seconds,
      size: SIZES[index % SIZES.length] as string,
      fails,
      slow,
      creator: -1,
      id: null,
      final: null,
      call: {
        tag,
        userId: user.id,
        kind: "video",
        priceName: VIDEO_PRICE_NAME,
        ratio: 1,
        units: Number(seconds),
        answered: false,
      },
    };
  });

  await eachLimited(videos, 8, async (v) => {
    const { child, index } = cluster.pick(v.index);
    v.creator = index;
    const res = await callGateway(child.url, "POST", "/v1/videos", {
      headers: { authorization: `Bearer ${v.user.key}` },
      body: { model: VIDEO_MODEL, prompt: v.prompt, seconds: v.seconds, size: v.size },
    }).catch((err: Error) => ({ status: 0, body: { error: { message: err.message } } }));
    v.call.answered = res.status === 200;
    if (res.status === 200) v.id = res.body.id;
    else violations.push(`video ${v.index}: create answered ${res.status} ${JSON.stringify(res.body?.error ?? null)}`);
  });
  o.log(`${videos.filter((v) => v.id).length}/${videos.length} videos created`);

  const cut = videos.find((v) => v.slow && v.id);
  const [copyKill] = await Promise.all([
    cut ? killDuringCopy(cluster, o, cut.id as string) : Promise.resolve(null),
    eachLimited(
      videos.filter((v) => v.id),
      8,
      async (v) => {
        v.final = await pollToEnd(cluster, v, () => turn++);
      },
    ),
  ]);
  if (cut && !copyKill) violations.push(`video ${cut.id}: its copy to storage was never seen under way; no kill`);
  if (cut && copyKill) {
    // Its cost is what its end says: completed by another instance (charged), or failed (refunded).
    cut.call.expectEnd = cut.final === "completed" ? "success" : "failure";
  }

  let downloadsEqual = 0;
  let completed = 0;
  for (const v of videos) {
    if (!v.id) continue;
    const expected = v.fails ? "failed" : "completed";
    if (v.final === null) violations.push(`video ${v.id}: did not end in time`);
    else if (v.final !== expected && !(v === cut && copyKill && v.final === "failed")) {
      violations.push(`video ${v.id}: ended ${v.final}, expected ${expected}`);
    }
    if (v.final !== "completed") continue;
    completed += 1;
    const other = cluster.gateways[(v.creator + 1) % cluster.gateways.length] as Child;
    const got = await download(other, v);
    const want = simVideoFile({ prompt: v.prompt, seconds: v.seconds, size: v.size }, "video");
    if (got?.equals(want)) downloadsEqual += 1;
    else violations.push(`video ${v.id}: the download from ${other.name} is not the simulator's bytes`);
  }
  const failed = videos.filter((v) => v.final === "failed").length;
  o.log(`${completed} videos completed, ${failed} failed; ${downloadsEqual} downloads equal to the simulator's bytes`);
  let cutEnd = cut?.final ?? "none";
  if (cut && copyKill) {
    // The simulator's log shows the copy the kill cut and the one that finished it.
    const upstreamId = (await o.store.taskLease(cut.id as string))?.upstream_id;
    const res = await fetch(`${o.simUrl}/simulator/videos/downloads`);
    const mine = ((await res.json()) as { downloads: VideoDownload[] }).downloads.filter(
      (d) => d.videoId === upstreamId && d.variant === "video",
    );
    cutEnd += `; its video downloaded ${mine.length} times, ${mine.filter((d) => !d.complete).length} cut`;
  }
  return {
    calls: videos.map((v) => v.call),
    violations,
    figures: [
      [
        "videos created; completed; failed (marked to fail)",
        `${videos.filter((v) => v.id).length}; ${completed}; ${failed} (${videos.filter((v) => v.fails).length})`,
        `${videos.length}; all but the marked; the marked`,
      ],
      ["video downloads from another instance equal to the simulator's bytes", `${downloadsEqual}/${completed}`, "all"],
      [
        "video whose copy to storage was cut by a SIGKILL: instance killed; its end",
        copyKill ? `${copyKill}; ${cutEnd}` : "not seen",
        "completed by another instance, or failed and refunded",
      ],
    ],
  };
}

/** GET /v1/videos/{id} on the instances in turn until it is completed or failed (bounded). */
async function pollToEnd(cluster: Cluster, v: RunVideo, turn: () => number): Promise<string | null> {
  const until = Date.now() + 120_000;
  while (Date.now() < until) {
    const { child } = cluster.pick(turn());
    const res = await callGateway(child.url, "GET", `/v1/videos/${v.id}`, {
      headers: { authorization: `Bearer ${v.user.key}` },
    }).catch(() => null);
    const status = res?.status === 200 ? (res.body?.status as string) : null;
    if (status === "completed" || status === "failed") return status;
    await sleep(300);
  }
  return null;
}

/** The whole video content from one instance, or null. */
async function download(child: Child, v: RunVideo): Promise<Buffer | null> {
  try {
    const res = await fetch(`${child.url}/v1/videos/${v.id}/content`, {
      headers: { authorization: `Bearer ${v.user.key}` },
    });
    if (res.status !== 200) return null;
    return Buffer.from(await res.arrayBuffer());
  } catch {
    return null;
  }
}

/**
 * Waits until the simulator is sending the video's content (a copy to storage is under way), then
 * kills the instance holding the video's task lease (the one copying) and restarts it. Answers the
 * instance killed, or null when no copy was seen in time.
 */
async function killDuringCopy(cluster: Cluster, o: VideoPhaseOptions, taskId: string): Promise<string | null> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    const row = await o.store.taskLease(taskId);
    if (!row || row.status === "SUCCESS" || row.status === "FAILURE") return null;
    if (row.upstream_id && row.lease_owner && row.lease_until > Date.now()) {
      const res = await fetch(`${o.simUrl}/simulator/videos/downloads`);
      const { downloads } = (await res.json()) as { downloads: VideoDownload[] };
      const copying = downloads.some((d) => d.videoId === row.upstream_id && d.endedAt === null);
      const victim = cluster.indexOfLeaseOwner(row.lease_owner);
      if (copying && victim !== null) {
        const name = (cluster.gateways[victim] as Child).name;
        o.log(`${name} is copying video ${taskId} to storage: killing it`);
        await cluster.killAndRestart(victim, o.downMs, o.log);
        return name;
      }
    }
    await sleep(50);
  }
  return null;
}
