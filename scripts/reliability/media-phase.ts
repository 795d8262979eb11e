/**
 * The media phase of the run: streams (slow, many chunks) on the Gemini, OpenAI chat and Anthropic
 * messages surfaces, synchronous content, image calls (n > 1, slow upstream) and task submits, some
 * of them with an Idempotency-Key retried across instances, while instances are killed with
 * SIGKILL one after another and restarted. It opens with the debt race: each small-balance user
 * sends a burst of streams on all three surfaces at once, spread over the instances, which no
 * balance may answer by going below its credit line. Every call carries a tag in its prompt, so
 * the simulator's usage record can be matched to it (the chat surfaces reach the same Gemini
 * channel).
 */
import { callGateway } from "../../test/reliability/harness.js";
import type { Cluster } from "./cluster.js";
import type { ClientCall } from "./money-checks.js";
import type { Child } from "./processes.js";

export interface MediaUser {
  id: number;
  key: string;
  /** The user's group ratio. */
  groupRatio: number;
  /** A small balance: too small for images, so never chosen for the calls sent to a victim. */
  small?: boolean;
}

export interface MediaPhaseOptions {
  users: MediaUser[];
  channelRatio: { content: number; image: number; task: number };
  /** How many workers send calls at once. */
  concurrency: number;
  /** Instances to kill, in order, and when (ms after the phase starts). */
  kills: Array<{ instance: number; atMs: number }>;
  /** How long an instance stays down before its restart (ms). */
  downMs: number;
  log(line: string): void;
}

type Kind = "stream" | "content" | "image" | "task";

export interface MediaPhaseResult {
  calls: ClientCall[];
  /** Per kill: the calls of each kind in flight on the victim when it was killed. */
  inFlightAtKills: Array<Record<Kind, number>>;
  idempotentRetries: number;
  refused: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How many streams of each surface one small-balance user sends at once in the debt race. */
const DEBT_RACE_BURST = 6;

/** A metered surface the phase streams on; all three reach the run's Gemini channel. */
type Surface = "gemini" | "chat" | "messages";

const streamText = (tag: string) => `#${tag}# [slow] [chunks=24] tell a long story`;

function contentBody(tag: string, stream: boolean) {
  const text = stream ? streamText(tag) : `#${tag}# say something`;
  return {
    contents: [{ role: "user", parts: [{ text }] }],
    generationConfig: { maxOutputTokens: 400, thinkingConfig: { thinkingBudget: 0 } },
  };
}

/** Path, headers and body of a stream on one surface, and how a whole answer ends there. */
function streamRequest(
  surface: Surface,
  tag: string,
  key: string,
): { path: string; headers: Record<string, string>; body: unknown; whole(text: string): boolean } {
  const text = streamText(tag);
  if (surface === "chat") {
    return {
      path: "/v1/chat/completions",
      headers: { authorization: `Bearer ${key}` },
      body: {
        model: "gemini-2.5-flash",
        stream: true,
        max_tokens: 400,
        messages: [{ role: "user", content: text }],
      },
      whole: (t: string) =>
        t.includes('"finish_reason":"stop"') && t.includes("data: [DONE]") && !t.includes('"error"'),
    };
  }
  if (surface === "messages") {
    return {
      path: "/v1/messages",
      headers: { "x-api-key": key, "anthropic-version": "2023-06-01" },
      body: { model: "gemini-2.5-flash", stream: true, max_tokens: 400, messages: [{ role: "user", content: text }] },
      whole: (t: string) => t.includes("event: message_stop") && !t.includes("event: error"),
    };
  }
  return {
    path: "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    headers: { "x-goog-api-key": key },
    body: contentBody(tag, true),
    whole: (t: string) => t.includes('"finishReason":"STOP"') && !t.includes('"error"'),
  };
}

export async function runMediaPhase(cluster: Cluster, o: MediaPhaseOptions): Promise<MediaPhaseResult> {
  const calls: ClientCall[] = [];
  const inFlight = new Map<number, Record<Kind, number>>();
  const busy = (i: number) => {
    const counts = inFlight.get(i) ?? { stream: 0, content: 0, image: 0, task: 0 };
    inFlight.set(i, counts);
    return counts;
  };
  const inFlightAtKills: Array<Record<Kind, number>> = [];
  let idempotentRetries = 0;
  let refused = 0;
  let stopping = false;
  let next = 0;

  /** One request to a live instance, counted as in flight there while it runs. */
  const send = async (
    kind: Kind,
    n: number,
    method: string,
    path: string,
    headers: Record<string, string>,
    body: unknown,
    target?: number,
  ) => {
    const { index, child } =
      target === undefined ? cluster.pick(n) : { index: target, child: cluster.gateways[target] as Child };
    busy(index)[kind] += 1;
    try {
      return await callGateway(child.url, method, path, { headers, body });
    } finally {
      busy(index)[kind] -= 1;
    }
  };

  /** Sends until answered, retrying on a cut connection, 5xx or 409 (in progress): an idempotent call. */
  const sendWithKey = async (
    kind: Kind,
    n: number,
    path: string,
    headers: Record<string, string>,
    body: unknown,
    firstTarget?: number,
  ) => {
    for (let attempt = 0; attempt < 12; attempt++) {
      if (attempt > 0) {
        idempotentRetries += 1;
        await sleep(1000);
      }
      try {
        const target = attempt === 0 ? firstTarget : undefined;
        const res = await send(kind, n + attempt, "POST", path, headers, body, target);
        if (res.status === 200 || (res.status < 500 && res.status !== 409)) return res;
      } catch {
        // the instance died under the call: retry elsewhere with the same key
      }
    }
    return null;
  };

  /** An image call with an Idempotency-Key, sent first to instance `target` when given. */
  const keyedImage = async (n: number, user: MediaUser, target?: number) => {
    const tag = `i${n}`;
    const call: ClientCall = {
      tag,
      userId: user.id,
      kind: "image",
      priceName: "image-model",
      ratio: user.groupRatio * o.channelRatio.image,
      answered: false,
    };
    calls.push(call);
    const body = { model: "image-model", prompt: `#${tag}# [slow] a lighthouse`, n: 2 + (n % 3) };
    const headers = { authorization: `Bearer ${user.key}`, "idempotency-key": `key-${tag}` };
    const res = await sendWithKey("image", n, "/v1/images/generations", headers, body, target);
    if (res && res.status !== 200) refused += 1;
    if (res?.status === 200) {
      call.answered = true;
      call.images = Array.isArray(res.body?.data) ? res.body.data.length : 0;
    }
  };

  /** A stream on one surface, priced as content of the run's Gemini channel. */
  const streamCall = async (n: number, user: MediaUser, surface: Surface) => {
    const tag = `${surface === "gemini" ? "s" : surface === "chat" ? "o" : "m"}${n}`;
    const call: ClientCall = {
      tag,
      userId: user.id,
      kind: "content",
      priceName: "gemini-2.5-flash",
      ratio: user.groupRatio * o.channelRatio.content,
      answered: false,
    };
    calls.push(call);
    const req = streamRequest(surface, tag, user.key);
    try {
      const res = await send("stream", n, "POST", req.path, req.headers, req.body);
      if (res.status !== 200) refused += 1;
      call.answered = res.status === 200 && req.whole(res.text);
    } catch {
      // killed mid-call: not answered
    }
  };

  const job = async (n: number) => {
    const user = o.users[n % o.users.length] as MediaUser;
    const google = { "x-goog-api-key": user.key };
    const bearer = { authorization: `Bearer ${user.key}` };
    const slot = n % 10;
    if (slot <= 3) {
      await streamCall(n, user, slot === 1 ? "chat" : slot === 2 ? "messages" : "gemini");
      return;
    }
    if (slot === 4) {
      const tag = `c${n}`;
      const call: ClientCall = {
        tag,
        userId: user.id,
        kind: "content",
        priceName: "gemini-2.5-flash",
        ratio: user.groupRatio * o.channelRatio.content,
        answered: false,
      };
      calls.push(call);
      const path = "/v1beta/models/gemini-2.5-flash:generateContent";
      try {
        const res = await send("content", n, "POST", path, google, contentBody(tag, false));
        if (res.status !== 200) refused += 1;
        call.answered = res.status === 200;
      } catch {
        // killed mid-call: not answered
      }
      return;
    }
    if (slot >= 6 && slot <= 7) {
      await keyedImage(n, user);
      return;
    }
    if (slot === 5) {
      const tag = `i${n}`;
      const call: ClientCall = {
        tag,
        userId: user.id,
        kind: "image",
        priceName: "image-model",
        ratio: user.groupRatio * o.channelRatio.image,
        answered: false,
      };
      calls.push(call);
      const body = { model: "image-model", prompt: `#${tag}# [slow] a lighthouse`, n: 2 + (n % 3) };
      try {
        const res = await send("image", n, "POST", "/v1/images/generations", bearer, body);
        if (res && res.status !== 200) refused += 1;
        if (res?.status === 200) {
          call.answered = true;
          call.images = Array.isArray(res.body?.data) ? res.body.data.length : 0;
        }
      } catch {
        // killed mid-call
      }
      return;
    }
    const tag = `k${n}`;
    const withKey = slot === 9;
    const call: ClientCall = {
      tag,
      userId: user.id,
      kind: "task",
      priceName: "audioa:MUSIC",
      ratio: user.groupRatio * o.channelRatio.task,
      answered: false,
    };
    calls.push(call);
    const body = { prompt: `#${tag}# a song` };
    try {
      const res = withKey
        ? await sendWithKey("task", n, "/audioa/submit/MUSIC", { ...bearer, "idempotency-key": `key-${tag}` }, body)
        : await send("task", n, "POST", "/audioa/submit/MUSIC", bearer, body);
      if (res && res.status !== 200) refused += 1;
      call.answered = res?.status === 200;
    } catch {
      // killed mid-submit
    }
  };

  // The debt race: every small-balance user's burst of streams on the three surfaces, all at once.
  const small = o.users.filter((u) => u.small);
  await Promise.all(
    small.flatMap((user) =>
      (["gemini", "chat", "messages"] as const).flatMap((surface) =>
        Array.from({ length: DEBT_RACE_BURST }, () => streamCall(next++, user, surface)),
      ),
    ),
  );
  o.log(`debt race: ${small.length} small-balance users, ${DEBT_RACE_BURST} streams each on 3 surfaces at once`);

  const worker = async () => {
    while (!stopping) await job(next++);
  };
  const started = Date.now();
  const workers = Array.from({ length: o.concurrency }, worker);
  const doomed: Array<Promise<void>> = [];
  const rich = o.users.filter((u) => !u.small);
  for (const kill of o.kills) {
    await sleep(Math.max(0, started + kill.atMs - Date.now() - 500));
    // Two keyed image calls surely in flight on the victim: their retries must take the key over.
    for (let j = 0; j < 2; j++) {
      const n = next++;
      doomed.push(keyedImage(n, rich[n % rich.length] as MediaUser, kill.instance));
    }
    await sleep(500);
    inFlightAtKills.push({ ...busy(kill.instance) });
    await cluster.killAndRestart(kill.instance, o.downMs, o.log);
  }
  await sleep(3000);
  stopping = true;
  await Promise.all([...workers, ...doomed]);
  return { calls, inFlightAtKills, idempotentRetries, refused };
}
