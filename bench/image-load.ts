/**
 * The image load: a Gemini image request straight to the upstream, and `POST /v1/images/generations`
 * through each gateway (which decodes the upstream's inline PNG, stores it, charges and settles,
 * and answers with its own URL).
 */
import { type LoadResult, type LoadSettings, loadTarget, type WatchedProcess } from "./load.js";
import type { MemorySampler } from "./memory-sampler.js";
import type { RunningChild } from "./processes.js";
import type { BenchResults, TargetId } from "./results.js";
import { IMAGE_MODEL, IMAGE_PROMPT, imageRequest, preflight, UPSTREAM_KEY } from "./scenarios.js";

export interface ImageLoadContext {
  upstream: RunningChild;
  gateways: { id: TargetId; child: RunningChild; url: string; token: string }[];
  settings: LoadSettings;
  memory: MemorySampler;
  watched: (server: RunningChild | null) => WatchedProcess[];
  describe: (name: string, r: LoadResult) => string;
  log: (line: string) => void;
}

/** Loads each image path once (no rounds) and records the figures in `images`. */
export async function measureImages(context: ImageLoadContext, images: BenchResults["images"]): Promise<void> {
  const { upstream, settings, memory, watched, describe, log } = context;
  log(`images (${IMAGE_MODEL}, 1K tier):`);
  const direct = {
    url: `${upstream.url}/v1beta/models/${IMAGE_MODEL}:generateContent`,
    headers: { "content-type": "application/json", "x-goog-api-key": UPSTREAM_KEY },
    body: JSON.stringify({
      contents: [{ role: "user", parts: [{ text: IMAGE_PROMPT }] }],
      generationConfig: { responseModalities: ["TEXT", "IMAGE"] },
    }),
  };
  const directProblem = await preflight(direct, "json");
  if (directProblem) images.notes.push(`direct: ${directProblem}`);
  else {
    images.direct = await memory.during([upstream], () => loadTarget(direct, settings, watched(null)));
    log(describe(`direct (${upstream.name})`, images.direct));
  }
  for (const { id, child, url, token } of context.gateways) {
    const request = imageRequest(url, token);
    const problem = await preflight(request, "image");
    if (problem) {
      images.notes.push(`${child.name}: not measured: ${problem}`);
      log(`  ${child.name}: not measured: ${problem}`);
      continue;
    }
    const r = await memory.during([upstream, child], () => loadTarget(request, settings, watched(child)));
    if (id === "gateway-sqlite") images.gateway = r;
    else images.gatewayPostgres = r;
    log(describe(child.name, r));
  }
}
