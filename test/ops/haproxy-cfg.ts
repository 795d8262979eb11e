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
