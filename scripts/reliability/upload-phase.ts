/**
 * The upload phase of the run: files brought in with UPLOAD on the live cluster.
 *
 * - Across instances: each family's UPLOAD is taken by one instance and COVERed by another, which
 *   reads the upload from the shared bucket; both must end SUCCESS. Their files are the
 *   simulator's (the channel's own host, whose result URLs the gateway copies from).
 * - Cut by a kill: uploads of a file that arrives slowly are sent to one instance, which is killed
 *   with SIGKILL while it fetches them (and restarted). Each of them was held before its fetch, so
 *   its charge is left open; the run's closure check sees every such charge closed.
 * - Refused: a user without balance sends uploads; the file host must see no request for them and
 *   the bucket no object holding their bytes (nothing is fetched or stored before the hold).
 *
 * The other files come from a host of the run's own on loopback, so that it counts every fetch.
 */

import { readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { mp3File } from "../../src/simulator/media.js";
import { callGateway } from "../../test/reliability/harness.js";
import type { RunBucket } from "./bucket.js";
import type { Cluster } from "./cluster.js";
import type { ClientCall } from "./money-checks.js";
import type { Outcome, Submission } from "./outcome-checks.js";
import type { Child } from "./processes.js";

type Family = "audioa" | "audiob";
type Admin = (method: string, urlPath: string, body?: unknown) => Promise<any>;

/** How long a slow file takes to arrive: long enough that a kill lands during its fetch. */
const SLOW_FILE_MS = 4_000;
/** Uploads sent to the victim at once. */
const CUT_UPLOADS = 4;
/** Uploads of the user without balance. */
const REFUSED_UPLOADS = 5;

export interface UploadPhaseOptions {
  users: Array<{ id: number; key: string }>;
  /** The simulator, whose `/media/<name>.mp3` serves the uploads that must succeed. */
  simUrl: string;
  admin: Admin;
  bucket: RunBucket;
  /** The instance killed while it fetches. */
  instance: number;
  downMs: number;
  log(line: string): void;
}

export interface UploadPhaseResult {
  outcomes: Outcome[];
  calls: ClientCall[];
  figures: Array<[string, string, string]>;
  violations: string[];
  /** Files fetched for refused requests, and objects stored with their bytes: both must be 0. */
  refusedFetches: number;
  refusedStored: number;
}

/** A file host on loopback: `/<name>.mp3` answers an MP3 whose tag holds `name`, slowly when the name says so. */
async function startFileHost() {
  const hits: string[] = [];
  let sending = 0;
  const server = http.createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? "/").slice(1).replace(/\.mp3$/, ""));
    hits.push(name);
    const bytes = mp3File(`upload ${name}`);
    res.writeHead(200, { "content-type": "audio/mpeg", "content-length": String(bytes.length) });
    if (!name.startsWith("slow-")) {
      res.end(bytes);
      return;
    }
    // Eight pieces over SLOW_FILE_MS; the piece timer stops when the fetching instance dies.
    sending += 1;
    let piece = 0;
    const size = Math.ceil(bytes.length / 8);
    const timer = setInterval(() => {
      if (res.destroyed || piece >= 8) {
        clearInterval(timer);
        sending -= 1;
        if (!res.destroyed) res.end();
        return;
      }
      res.write(bytes.subarray(piece * size, (piece + 1) * size));
      piece += 1;
    }, SLOW_FILE_MS / 8);
    res.on("close", () => {
      if (piece < 8) {
        clearInterval(timer);
        sending -= 1;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (name: string) => `http://127.0.0.1:${port}/${encodeURIComponent(name)}.mp3`,
    hits,
    sending: () => sending,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The files below s3rver's folder, each object's bytes among them. Read from the disk rather than
 * through s3rver's listing, which fails for good on an object whose upload a SIGKILL cut.
 */
function filesBelow(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

export async function runUploadPhase(cluster: Cluster, o: UploadPhaseOptions): Promise<UploadPhaseResult> {
  const host = await startFileHost();
  const outcomes: Outcome[] = [];
  const calls: ClientCall[] = [];
  const violations: string[] = [];
  let n = 0;
  try {
    const submit = async (
      user: { id: number; key: string },
      family: Family,
      action: string,
      body: object,
      target?: number,
    ) => {
      const index = 200_000 + n++;
      const call: ClientCall = {
        tag: `u${index}`,
        userId: user.id,
        kind: "action",
        priceName: `${family}:${action}`,
        ratio: 1,
        answered: false,
      };
      calls.push(call);
      const child = target === undefined ? cluster.pick(index).child : (cluster.gateways[target] as Child);
      const res = await callGateway(child.url, "POST", `/${family}/submit/${action}`, {
        headers: { authorization: `Bearer ${user.key}` },
        body,
      });
      call.answered = res.status === 200;
      const submission: Submission = { index, family, action, marker: "", key: user.key };
      const outcome: Outcome = {
        submission,
        status: res.status,
        taskId: res.status === 200 ? res.body.data : null,
        code: res.body?.code,
      };
      outcomes.push(outcome);
      return { outcome, index };
    };

    /** The upload id of an UPLOAD task once it has succeeded, or null when it does not in time. */
    const uploadId = async (user: { key: string }, family: Family, taskId: string | null) => {
      if (!taskId) return null;
      const until = Date.now() + 30_000;
      while (Date.now() < until) {
        const { child } = cluster.pick(n++);
        const res = await callGateway(child.url, "GET", `/${family}/fetch/${taskId}`, {
          headers: { authorization: `Bearer ${user.key}` },
        }).catch(() => null);
        const record = res?.body?.data;
        if (record?.status === "SUCCESS") return record.data?.clips?.[0]?.clip_id ?? null;
        if (record?.status === "FAILURE") return null;
        await sleep(250);
      }
      return null;
    };

    // Across instances: the UPLOAD on one, its COVER on the next.
    let across = 0;
    await Promise.all(
      (["audioa", "audiob"] as const).map(async (family, i) => {
        const user = o.users[i % o.users.length] as { id: number; key: string };
        const first = i % cluster.gateways.length;
        const up = await submit(
          user,
          family,
          "UPLOAD",
          { url: `${o.simUrl}/media/upload-${family}-${user.id}.mp3` },
          first,
        );
        const id = await uploadId(user, family, up.outcome.taskId);
        if (!id) {
          violations.push(`uploads: the ${family} upload of user ${user.id} did not succeed in time`);
          return;
        }
        const cover = await submit(
          user,
          family,
          "COVER",
          { upload_id: id, prompt: "a cover of the upload" },
          (first + 1) % cluster.gateways.length,
        );
        if (cover.outcome.status === 200) across += 1;
      }),
    );

    // Cut by a kill: slow uploads on the victim, killed while the file host is still sending them.
    const victim = cluster.gateways[o.instance] as Child;
    const user = o.users[0] as { id: number; key: string };
    const cut = Array.from({ length: CUT_UPLOADS }, (_, i) => {
      const index = 200_000 + n++;
      const call: ClientCall = {
        tag: `u${index}`,
        userId: user.id,
        kind: "action",
        priceName: "audioa:UPLOAD",
        ratio: 1,
        answered: false,
      };
      calls.push(call);
      return callGateway(victim.url, "POST", "/audioa/submit/UPLOAD", {
        headers: { authorization: `Bearer ${user.key}` },
        body: { url: host.url(`slow-${index}-${i}`) },
      })
        .then((res) => {
          // The answer beat the kill: a task like any other, which must end SUCCESS.
          call.answered = res.status === 200;
          if (res.status === 200) {
            outcomes.push({
              submission: { index, family: "audioa", action: "UPLOAD", marker: "", key: user.key },
              status: 200,
              taskId: res.body.data,
              code: "",
            });
          }
          return res.status;
        })
        .catch(() => null);
    });
    const waitUntil = Date.now() + 10_000;
    while (host.sending() < CUT_UPLOADS && Date.now() < waitUntil) await sleep(50);
    const inFlight = host.sending();
    if (inFlight === 0) violations.push("uploads: no upload was being fetched when the victim was to be killed");
    await cluster.killAndRestart(o.instance, o.downMs, o.log);
    const answers = await Promise.all(cut);
    const cutByKill = answers.filter((s) => s === null).length;
    o.log(`uploads: ${inFlight} being fetched by ${victim.name} at its kill; ${cutByKill} cut`);

    // Refused: a user without balance; the host must see none of these files, the bucket hold none.
    const before = new Set(filesBelow(o.bucket.directory));
    const poor = await o.admin("POST", "/users", { name: "uploads-no-balance", quota: 0 });
    const poorToken = await o.admin("POST", `/users/${poor.id}/tokens`, { name: "default" });
    const refusedNames = Array.from({ length: REFUSED_UPLOADS }, (_, i) => `refused-${poor.id}-${i}`);
    let refusedAnswers = 0;
    for (const [i, name] of refusedNames.entries()) {
      const { child } = cluster.pick(i);
      const family: Family = i % 2 === 0 ? "audioa" : "audiob";
      const res = await callGateway(child.url, "POST", `/${family}/submit/UPLOAD`, {
        headers: { authorization: `Bearer ${poorToken.key}` },
        body: { url: host.url(name) },
      });
      if (res.status >= 400 && res.status < 500) refusedAnswers += 1;
      else violations.push(`uploads: a user without balance was answered ${res.status}`);
    }
    const refusedFetches = host.hits.filter((h) => refusedNames.includes(h)).length;
    let refusedStored = 0;
    for (const file of filesBelow(o.bucket.directory).filter((f) => !before.has(f))) {
      let text: string;
      try {
        text = readFileSync(file).toString("latin1");
      } catch {
        continue; // removed since the walk (a copy another instance took back)
      }
      if (refusedNames.some((name) => text.includes(`upload ${name}`))) refusedStored += 1;
    }
    if (refusedFetches > 0) violations.push(`uploads: ${refusedFetches} files fetched for refused requests`);
    if (refusedStored > 0) violations.push(`uploads: ${refusedStored} objects stored for refused requests`);

    const figures: Array<[string, string, string]> = [
      ["uploads taken by one instance and covered by another (shared bucket)", `${across}/2`, "all"],
      [
        "uploads being fetched at a SIGKILL; cut by it (their charges join the closure check)",
        `${inFlight}; ${cutByKill}`,
        "> 0",
      ],
      [
        "uploads of a user without balance: refused; files fetched; objects stored",
        `${refusedAnswers}/${REFUSED_UPLOADS}; ${refusedFetches}; ${refusedStored}`,
        `${REFUSED_UPLOADS}/${REFUSED_UPLOADS}; 0; 0`,
      ],
    ];
    return { outcomes, calls, figures, violations, refusedFetches, refusedStored };
  } finally {
    await host.close();
  }
}
