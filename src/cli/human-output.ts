/**
 * The admin command line's output for people: a record as `field: value` lines, a list as one
 * line per record with the fields that tell records apart. `--json` prints the data as is.
 */

const LIST_COLUMNS = [
  "id",
  "kind",
  "name",
  "group",
  "type",
  "capabilities",
  "status",
  "quota",
  "unit",
  "rates",
  "used_quota",
  "base_url",
];

function text(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

function record(value: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(value).map((k) => k.length));
  return Object.entries(value)
    .map(([k, v]) => `${k.padEnd(width)}  ${text(v)}\n`)
    .join("");
}

function table(rows: Record<string, unknown>[]): string {
  if (rows.length === 0) return "(none)\n";
  const columns = LIST_COLUMNS.filter((c) => rows.some((r) => c in r));
  const cells = [columns, ...rows.map((r) => columns.map((c) => text(r[c])))];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => (line[i] ?? "").length)));
  return (
    cells.map((line) => `${line.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ")}`.trimEnd()).join("\n") + "\n"
  );
}

export function humanText(result: unknown): string {
  if (Array.isArray(result)) return table(result as Record<string, unknown>[]);
  if (result && typeof result === "object") return record(result as Record<string, unknown>);
  return `${text(result)}\n`;
}
