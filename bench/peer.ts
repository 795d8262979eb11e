/**
 * The peer gateway, `@portkey-ai/gateway`, installed from the npm registry into a temporary
 * folder at bench time (it is not a dependency of the project) and run as a child process bound
 * to 127.0.0.1. It reaches the simulator through its `google` provider with a custom host:
 * OpenAI-style chat completions in, Gemini `generateContent` / `streamGenerateContent` out; and,
 * for the chat load, through its `openai` provider with a custom host: OpenAI chat in and out.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import type { LoadRequest } from "./load.js";
import type { ChildSpec } from "./processes.js";

const run = promisify(execFile);
export const PEER_PACKAGE = "@portkey-ai/gateway";
const PRELOAD = path.join(path.dirname(fileURLToPath(import.meta.url)), "peer-preload.mjs");

export interface PeerInstall {
  dir: string;
  version: string;
  entry: string;
}

/** `npm install --prefix dir @portkey-ai/gateway@spec`; install scripts are not run (its build needs none). */
export async function installPeer(dir: string, spec: string): Promise<PeerInstall> {
  const packageDir = path.join(dir, "node_modules", ...PEER_PACKAGE.split("/"));
  if (!existsSync(path.join(packageDir, "package.json"))) {
    await run(
      "npm",
      [
        "install",
        "--prefix",
        dir,
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        `${PEER_PACKAGE}@${spec}`,
      ],
      { timeout: 240_000, maxBuffer: 16 * 1024 * 1024 },
    );
  }
  const manifest = JSON.parse(readFileSync(path.join(packageDir, "package.json"), "utf8")) as {
    version: string;
    bin?: string | Record<string, string>;
  };
  const bin = typeof manifest.bin === "string" ? manifest.bin : Object.values(manifest.bin ?? {})[0];
  const entry = path.join(packageDir, bin ?? "build/start-server.js");
  if (!existsSync(entry)) throw new Error(`${PEER_PACKAGE}@${manifest.version} has no server entry at ${bin}`);
  return { dir, version: manifest.version, entry };
}

/** How to start the installed peer on `port` (its own flags: `--port=N --headless`). */
export function peerChildSpec(install: PeerInstall, port: number, logFile: string): ChildSpec {
  return {
    name: "peer",
    args: ["--import", pathToFileURL(PRELOAD).href, install.entry, `--port=${port}`, "--headless"],
    cwd: install.dir,
    // A clean environment: no Redis, no trusted-host list, no log UI, nothing of ours leaks in.
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: "production" },
    logFile,
    ready: { kind: "http", url: `http://127.0.0.1:${port}/` },
  };
}

/** A chat completion through the peer's google provider, sent to the simulator (custom host). */
export function peerRequest(
  peerUrl: string,
  simulatorUrl: string,
  simulatorKey: string,
  model: string,
  prompt: string,
  stream: boolean,
): LoadRequest {
  return {
    url: `${peerUrl.replace(/\/$/, "")}/v1/chat/completions`,
    headers: {
      "content-type": "application/json",
      "x-portkey-provider": "google",
      "x-portkey-custom-host": simulatorUrl.replace(/\/$/, ""),
      authorization: `Bearer ${simulatorKey}`,
    },
    body: JSON.stringify({ model, messages: [{ role: "user", content: prompt }], ...(stream ? { stream: true } : {}) }),
  };
}

/**
 * A chat completion through the peer's `openai` provider with a custom host: OpenAI chat in and
 * out, the peer's own chat route at its plainest (no translation between vendors).
 */
export function peerChatRequest(peerUrl: string, upstreamUrl: string, upstreamKey: string, body: string): LoadRequest {
  return {
    url: `${peerUrl.replace(/\/$/, "")}/v1/chat/completions`,
    headers: {
      "content-type": "application/json",
      "x-portkey-provider": "openai",
      "x-portkey-custom-host": `${upstreamUrl.replace(/\/$/, "")}/v1`,
      authorization: `Bearer ${upstreamKey}`,
    },
    body,
  };
}
