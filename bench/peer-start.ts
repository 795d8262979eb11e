/**
 * The peer as a target of the run: installed, started, its routes tried once, and the request of
 * each load chosen. Gemini loads go through its `google` provider (OpenAI chat completions in,
 * Gemini out); the chat load through its `openai` provider (OpenAI chat in and out) when that
 * route streams, else through the `google` provider too.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { LoadRequest } from "./load.js";
import type { BenchOptions } from "./options.js";
import { installPeer, PEER_PACKAGE, peerChatRequest, peerChildSpec, peerRequest } from "./peer.js";
import { type ChildProcesses, freePort, type RunningChild } from "./processes.js";
import type { BenchResults, Phase } from "./results.js";
import {
  CHAT_BODY,
  type Expectation,
  FIRST_EVENT_PROMPT,
  geminiRequest,
  MODEL,
  PACED_MODEL,
  PROMPT,
  preflight,
  UPSTREAM_KEY,
} from "./scenarios.js";

export interface PeerTarget {
  child: RunningChild;
  request: (phase: Phase) => LoadRequest;
  firstEvent: () => LoadRequest;
  expect: Partial<Record<Phase, Expectation>>;
}

export interface PeerStartContext {
  children: ChildProcesses;
  options: BenchOptions;
  runDir: string;
  upstreamUrl: string;
  log: (line: string) => void;
}

/** Starts the peer, recording in `record` what it is and how its routes answered; null when it cannot run. */
export async function startPeer(context: PeerStartContext, record: BenchResults["peer"]): Promise<PeerTarget | null> {
  const { children, options, runDir, upstreamUrl, log } = context;
  if (options.skip.has("peer")) {
    record.note = "left out (--skip peer)";
    return null;
  }
  let child: RunningChild;
  try {
    const dir = options.peerDir ?? path.join(runDir, "peer");
    mkdirSync(dir, { recursive: true });
    log(`  installing ${PEER_PACKAGE}@${options.peerVersion} from the npm registry ...`);
    const install = await installPeer(dir, options.peerVersion);
    record.version = install.version;
    child = await children.start(peerChildSpec(install, await freePort(), path.join(runDir, "peer.log")));
    log(`  peer ${PEER_PACKAGE}@${install.version} ${child.url} (pid ${child.pid})`);
  } catch (err) {
    record.note = `could not be run on node ${process.version}: ${(err as Error).message.split("\n")[0]}`;
    log(`  peer: ${record.note}`);
    return null;
  }
  const base = child.url;
  // Its native pass-through route, for the record: its chat route is the one loaded.
  const native = await preflight(
    {
      url: `${base.replace(/\/$/, "")}/v1/models/${MODEL}:generateContent`,
      headers: {
        "content-type": "application/json",
        "x-portkey-provider": "google",
        "x-portkey-custom-host": `${upstreamUrl}/v1beta`,
        "x-goog-api-key": UPSTREAM_KEY,
        authorization: `Bearer ${UPSTREAM_KEY}`,
      },
      body: geminiRequest(upstreamUrl, UPSTREAM_KEY, false).body,
    },
    "json",
  );
  record.nativeRoute = native ?? "answers 200";

  const gemini = (stream: boolean) => peerRequest(base, upstreamUrl, UPSTREAM_KEY, MODEL, PROMPT, stream);
  let chat = peerChatRequest(base, upstreamUrl, UPSTREAM_KEY, CHAT_BODY);
  let chatExpect: Expectation = "chat-sse";
  if (!options.skip.has("chat")) {
    const openAiRoute = await preflight(chat, "chat-sse");
    record.openAiChatRoute = openAiRoute ?? "answers 200";
    if (openAiRoute) {
      chat = gemini(true);
      // Its translated chat stream ends without `data: [DONE]`.
      chatExpect = "sse";
      log(`  peer: its openai provider failed (${openAiRoute}); its chat load goes through the google provider`);
    }
  }
  return {
    child,
    request: (phase) => (phase === "chat" ? chat : gemini(phase === "stream")),
    firstEvent: () => peerRequest(base, upstreamUrl, UPSTREAM_KEY, PACED_MODEL, FIRST_EVENT_PROMPT, true),
    expect: { chat: chatExpect },
  };
}
