/**
 * The access line's URL redaction, alone: CPU per URL of `redactUrl` (src/logging/redaction.ts) on
 * the URLs of a busy gateway (a few stream and content paths repeated, which redaction remembers),
 * on URLs that are each new (task polls, video downloads, a model list with a page token: the
 * name of every parameter judged and every long run of key characters looked at), and on URLs that
 * hold a key (by name, or by its shape in the path), which are never remembered.
 *
 * Usage: node --import tsx bench/log-redaction.ts [--urls 200000] [--rounds 6]
 */
import { parseArgs } from "node:util";
import { randomBase62 } from "../src/core/ids.js";
import { redactUrl } from "../src/logging/redaction.js";
import { median } from "./load.js";

const { values } = parseArgs({
  options: { urls: { type: "string", default: "200000" }, rounds: { type: "string", default: "6" } },
});
const urls = Number(values.urls);
const rounds = Number(values.rounds);

/** Enough distinct URLs that the remembered ones (1,024) are cleared over and over. */
const DISTINCT = 4096;
const distinct = (make: (i: number) => string) => Array.from({ length: DISTINCT }, (_, i) => make(i));

const shapes: Record<string, string[]> = {
  "repeated paths": [
    "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    "/v1beta/models/gemini-2.5-flash:generateContent",
    "/v1/chat/completions",
  ],
  "each new, no key": distinct((i) =>
    i % 3 === 0
      ? `/audioa/fetch/task_${randomBase62(32)}`
      : i % 3 === 1
        ? `/v1/videos/vid_${randomBase62(32)}/content?variant=video`
        : `/v1/models?page_size=50&page_token=${i}&filter=gemini-2.5-flash-preview`,
  ),
  "a key by name": distinct(
    () => `/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key=sk-${randomBase62(48)}`,
  ),
  "a key by its shape": distinct(() => `/v1/models/sk-${randomBase62(48)}`),
};

for (const [shape, list] of Object.entries(shapes)) {
  const samples: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const start = process.cpuUsage();
    let length = 0;
    for (let i = 0; i < urls; i++) length += redactUrl(list[i % list.length] as string).length;
    const used = process.cpuUsage(start);
    if (length === 0) throw new Error("redaction made nothing");
    samples.push(((used.user + used.system) * 1000) / urls);
  }
  console.log(`${shape}: ${median(samples).toFixed(0)} ns per URL (median of ${rounds} rounds)`);
}
