/** One section of an HAProxy configuration (`defaults`, `frontend http`...), its lines as words. */
export interface HaproxySection {
  kind: string;
  name: string | null;
  lines: string[][];
}

const SECTION_KINDS = new Set([
  "global",
  "defaults",
  "frontend",
  "backend",
  "listen",
  "resolvers",
  "peers",
  "userlist",
]);

/** Reads an HAProxy configuration into sections; comments and blank lines are dropped. */
export function parseHaproxyConfig(text: string): HaproxySection[] {
  const sections: HaproxySection[] = [];
  for (const raw of text.split("\n")) {
    const words = raw.replace(/#.*$/, "").trim().split(/\s+/).filter(Boolean);
    if (words.length === 0) continue;
    if (SECTION_KINDS.has(words[0] as string) && !/^\s/.test(raw)) {
      sections.push({ kind: words[0] as string, name: words[1] ?? null, lines: [] });
    } else {
      const section = sections.at(-1);
      if (!section) throw new Error(`a setting before the first section: ${raw}`);
      section.lines.push(words);
    }
  }
  return sections;
}

/** The section of a kind and name; throws when it is missing. */
export function sectionOf(sections: HaproxySection[], kind: string, name: string | null = null): HaproxySection {
  const found = sections.find((s) => s.kind === kind && s.name === name);
  if (!found) throw new Error(`no ${kind} ${name ?? ""} section`);
  return found;
}

/** The lines of a section that start with the given words. */
export function linesStarting(section: HaproxySection, ...words: string[]): string[][] {
  return section.lines.filter((line) => words.every((w, i) => line[i] === w));
}

/** Writes sections back as a configuration HAProxy reads (one setting a line, indented). */
export function renderHaproxyConfig(sections: HaproxySection[]): string {
  return sections
    .map((s) => [[s.kind, s.name].filter(Boolean).join(" "), ...s.lines.map((l) => `  ${l.join(" ")}`)].join("\n"))
    .join("\n\n")
    .concat("\n");
}

const TIME_UNITS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** An HAProxy time (`100ms`, `2s`, `5m`; a bare number is milliseconds) in milliseconds. */
export function haproxyTimeMs(value: string): number {
  const m = /^(\d+)(us|ms|s|m|h|d)?$/.exec(value);
  if (!m) throw new Error(`not an HAProxy time: ${value}`);
  return Number(m[1]) * (TIME_UNITS[m[2] ?? "ms"] as number);
}

/** The value following `keyword` on a line (`inter 1s` -> `1s`), or undefined. */
export function argumentOf(line: string[], keyword: string): string | undefined {
  const i = line.indexOf(keyword);
  return i < 0 ? undefined : line[i + 1];
}
