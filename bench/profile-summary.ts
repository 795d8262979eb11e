/** Reads a V8 .cpuprofile (node --cpu-prof) and names where the time went. */
import { readFileSync } from "node:fs";
import type { ProfileEntry, ProfileSummary } from "./results.js";

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** Samples per area counting every area on the stack once: what a package costs with what it calls. */
function inclusiveAreas(profile: CpuProfile, counts: Map<number, number>, busy: (id: number) => boolean) {
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  for (const [id, count] of counts) {
    if (!busy(id)) continue;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const url = byId.get(at)?.callFrame.url ?? "";
      if (!url.includes("node_modules/") && !url.includes("/src/")) continue;
      const area = areaOf(url);
      if (seen.has(area)) continue;
      seen.add(area);
      totals.set(area, (totals.get(area) ?? 0) + count);
    }
  }
  return totals;
}

interface CpuProfile {
  nodes: CpuProfileNode[];
  samples: number[];
}

/** The area a script belongs to: our source by folder, a package by name, else the runtime. */
export function areaOf(url: string): string {
  // Native functions (better-sqlite3's statements, socket writes) and the garbage collector.
  if (url === "") return "(native code, gc)";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] as string;
  // The gateway runs its compiled dist/, laid out as src/ is.
  const ours = /\/(?:src|dist)\/([^/]+)(?:\/([^/]+))?/.exec(url);
  if (ours) return ours[2]?.includes(".") || !ours[2] ? `src/${ours[1]}` : `src/${ours[1]}/${ours[2]}`;
  if (url.startsWith("node:")) return "node internals";
  return "other";
}

/** Self time per area and the heaviest functions, as shares of the busy samples. */
export function summarizeProfile(file: string, top = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const counts = new Map<number, number>();
  for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);
  const idle = (id: number) => ["(idle)", "(program)"].includes(byId.get(id)?.callFrame.functionName ?? "");
  // Shares of the time the process was busy: idle and unattributed samples are left out.
  const total = [...counts].reduce((sum, [id, n]) => sum + (idle(id) ? 0 : n), 0) || 1;
  const areas = new Map<string, number>();
  const functions = new Map<string, { entry: ProfileEntry; count: number }>();
  for (const [id, count] of counts) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (idle(id)) continue;
    const area = areaOf(url);
    areas.set(area, (areas.get(area) ?? 0) + count);
    const location = url ? `${url.replace(/^.*?\/(node_modules|src)\//, "$1/")}:${lineNumber + 1}` : "";
    const key = `${functionName}@${location}`;
    const existing = functions.get(key);
    if (existing) existing.count += count;
    else
      functions.set(key, { entry: { functionName: functionName || "(anonymous)", location, selfPercent: 0 }, count });
  }
  const percent = (n: number) => Math.round((n / total) * 1000) / 10;
  const inclusive = inclusiveAreas(profile, counts, (id) => !idle(id));
  return {
    inclusiveByArea: [...inclusive]
      .map(([area, n]) => ({ area, selfPercent: percent(n) }))
      .sort((a, b) => b.selfPercent - a.selfPercent)
      .slice(0, 15),
    samples: profile.samples.length,
    byArea: [...areas]
      .map(([area, n]) => ({ area, selfPercent: percent(n) }))
      .sort((a, b) => b.selfPercent - a.selfPercent)
      .slice(0, 20),
    topFunctions: [...functions.values()]
      .sort((a, b) => b.count - a.count)
      .slice(0, top)
      .map(({ entry, count }) => ({ ...entry, selfPercent: percent(count) })),
  };
}
