import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "vitest";
import { eventually, ledgerRowsOf, submit, type TaskEnv, waitForTask } from "./harness.js";

/** Quota of one currency unit in the test gateways (the default `quotaPerUnit`). */
const QUOTA_PER_UNIT = 500_000;

/** The default price of each further action, as quota. */
export const ACTION_QUOTA: Readonly<Record<string, number>> = {
  MUSIC: 0.1 * QUOTA_PER_UNIT,
  LYRICS: 0.005 * QUOTA_PER_UNIT,
  EXTEND: 0.1 * QUOTA_PER_UNIT,
  COVER: 0.1 * QUOTA_PER_UNIT,
  ADD_INSTRUMENTAL: 0.1 * QUOTA_PER_UNIT,
  ADD_VOCALS: 0.1 * QUOTA_PER_UNIT,
  VOCALS_SWAP: 0.1 * QUOTA_PER_UNIT,
  STEMS: 0.02 * QUOTA_PER_UNIT,
  WAV: 0.01 * QUOTA_PER_UNIT,
  MUSIC_VIDEO: 0.02 * QUOTA_PER_UNIT,
  UPLOAD: 0.01 * QUOTA_PER_UNIT,
};

/** A MUSIC task of the user run to SUCCESS; answers its first clip's id. */
export async function succeededClip(env: TaskEnv, key: string, family = "audioa"): Promise<string> {
  const body = family === "audioa" ? { prompt: "[Verse]\nsource song" } : { prompt: "a source song" };
  const sub = await submit(env.gw.url, key, family, "MUSIC", body);
  expect(sub.status).toBe(200);
  const record = await waitForTask(env.gw.url, key, family, sub.body.data);
  expect(record.status).toBe("SUCCESS");
  return record.data.clips[0].clip_id;
}

/** Submits an action and runs it to its end; answers the fetched record and the task id. */
export async function runAction(env: TaskEnv, key: string, action: string, body: unknown, family = "audioa") {
  const sub = await submit(env.gw.url, key, family, action, body);
  expect(sub.status, JSON.stringify(sub.body)).toBe(200);
  expect(sub.body).toMatchObject({ code: "success", message: "task submitted successfully" });
  const taskId = sub.body.data as string;
  expect(taskId).toMatch(/^task_/);
  return { taskId, record: await waitForTask(env.gw.url, key, family, taskId) };
}

/** The task was charged its price and the charge settled (a success). */
export async function expectSettled(env: TaskEnv, userId: number, taskId: string, action: string) {
  expect(await ledgerRowsOf(env.gw, userId, taskId)).toEqual([
    { kind: "settle", amount: 0 },
    { kind: "charge", amount: -(ACTION_QUOTA[action] as number) },
  ]);
}

/** The task was charged its price and refunded it once (a failure). */
export async function expectRefunded(env: TaskEnv, userId: number, taskId: string, action: string) {
  expect(await ledgerRowsOf(env.gw, userId, taskId)).toEqual([
    { kind: "refund", amount: ACTION_QUOTA[action] as number },
    { kind: "charge", amount: -(ACTION_QUOTA[action] as number) },
  ]);
}

/** The body the simulator received for the first submit of `action` after `from` requests. */
export async function sentUpstream(env: TaskEnv, action: string, from = 0) {
  return eventually(async () =>
    env.sim.received.slice(from).find((r) => r.method === "POST" && r.path.endsWith(`/submit/${action}`)),
  );
}

/** Downloads a URL the gateway handed out: status, content type and bytes. */
export async function download(url: string) {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get("content-type"), bytes: Buffer.from(await res.arrayBuffer()) };
}

export interface FileServer {
  url: string;
  close(): Promise<void>;
}

/** A loopback server answering each path with the given bytes and content type (404 otherwise). */
export async function serveFiles(files: Record<string, { type: string; bytes: Buffer }>): Promise<FileServer> {
  const server = http.createServer((req, res) => {
    const file = files[req.url ?? ""];
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": file.type, "content-length": String(file.bytes.length) }).end(file.bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
