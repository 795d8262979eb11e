/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), enough to prove that
 * a scrape parses: every sample belongs to a family declared by `# TYPE` before it, names and
 * label names are legal, label values are properly quoted and escaped, values are numbers.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: "counter" | "gauge" | "histogram" | "summary" | "untyped";
  help: string;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);
const SUFFIXES: Record<string, string[]> = {
  counter: ["_total", ""],
  gauge: [""],
  untyped: [""],
  histogram: ["_bucket", "_sum", "_count"],
  summary: ["", "_sum", "_count"],
};

function parseValue(raw: string, line: number): number {
  if (raw === "+Inf") return Number.POSITIVE_INFINITY;
  if (raw === "-Inf") return Number.NEGATIVE_INFINITY;
  // Prometheus reads NaN in any letter case (prom-client writes "Nan" for an empty summary).
  if (/^nan$/i.test(raw)) return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw)) throw new Error(`line ${line}: bad value "${raw}"`);
  return Number(raw);
}

function parseLabels(text: string, line: number): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let i = 0;
  for (;;) {
    while (text[i] === " ") i++;
    if (text[i] === "}") return { labels, rest: text.slice(i + 1) };
    const eq = text.indexOf("=", i);
    if (eq < 0) throw new Error(`line ${line}: label without "="`);
    const name = text.slice(i, eq).trim();
    if (!LABEL_NAME.test(name)) throw new Error(`line ${line}: bad label name "${name}"`);
    if (text[eq + 1] !== '"') throw new Error(`line ${line}: label value of ${name} is not quoted`);
    let value = "";
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === "\\") {
        const next = text[++j];
        if (next === "n") value += "\n";
        else if (next === "\\" || next === '"') value += next;
        else throw new Error(`line ${line}: bad escape in label ${name}`);
      } else value += text[j];
    }
    if (j >= text.length) throw new Error(`line ${line}: unterminated label value`);
    if (name in labels) throw new Error(`line ${line}: label ${name} given twice`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ",") i++;
    else if (text[i] !== "}") throw new Error(`line ${line}: expected "," or "}" after label ${name}`);
  }
}

/** Parses a scrape; throws with the line number at the first violation. */
export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const lines = text.split("\n");
  if (lines.at(-1) !== "") throw new Error("the exposition must end with a line feed");
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (raw === "") return;
    if (raw.startsWith("#")) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
      if (!m) return; // a plain comment
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!METRIC_NAME.test(name)) throw new Error(`line ${line}: bad metric name "${name}"`);
      const family = families.get(name) ?? { name, type: "untyped" as const, help: "", samples: [] };
      if (kind === "TYPE") {
        if (!TYPES.has(rest)) throw new Error(`line ${line}: unknown type "${rest}"`);
        if (family.samples.length > 0) throw new Error(`line ${line}: TYPE after samples of ${name}`);
        family.type = rest as Family["type"];
      } else family.help = rest;
      families.set(name, family);
      return;
    }
    const nameMatch = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(raw);
    if (!nameMatch) throw new Error(`line ${line}: bad sample "${raw}"`);
    const name = nameMatch[1] as string;
    let rest = raw.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith("{")) ({ labels, rest } = parseLabels(rest.slice(1), line));
    const parts = rest.trim().split(/\s+/);
    if (parts.length < 1 || parts.length > 2 || parts[0] === "") throw new Error(`line ${line}: bad sample "${raw}"`);
    const value = parseValue(parts[0] as string, line);
    const family = [...families.values()].find((f) => (SUFFIXES[f.type] ?? [""]).some((s) => `${f.name}${s}` === name));
    if (!family) throw new Error(`line ${line}: sample ${name} has no declared family`);
    if (family.type === "histogram" && name.endsWith("_bucket") && !("le" in labels)) {
      throw new Error(`line ${line}: histogram bucket without le`);
    }
    family.samples.push({ name, labels, value });
  });
  return families;
}

/** The sum of the samples of `name` whose labels include `labels`; 0 when there is none. */
export function sampleSum(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const family of families.values()) {
    for (const s of family.samples) {
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) sum += s.value;
    }
  }
  return sum;
}
