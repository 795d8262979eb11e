/** A horizontal bar chart of requests per second, written as plain SVG (no chart library). */
import type { TargetResult } from "./results.js";

const COLOURS: Record<string, string> = {
  direct: "#8c8c8c",
  "bare-relay": "#4a78b5",
  "gateway-sqlite": "#2e9e5b",
  "gateway-postgres": "#1f7a45",
  peer: "#d9822b",
};

const escapeXml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** Bars of requests per second for generateContent, streaming and chat (when run), grouped by method. */
export function requestsPerSecondChart(targets: TargetResult[], caption: string): string {
  const groups = [
    { title: "generateContent", pick: (t: TargetResult) => t.generate?.requestsPerSecond },
    { title: "streamGenerateContent (SSE)", pick: (t: TargetResult) => t.stream?.requestsPerSecond },
    ...(targets.some((t) => t.chat)
      ? [{ title: "chat completions (stream)", pick: (t: TargetResult) => t.chat?.requestsPerSecond }]
      : []),
  ];
  const bars = groups.map((g) => ({
    title: g.title,
    rows: targets.map((t) => ({ id: t.id, label: t.label, value: g.pick(t) })),
  }));
  const max = Math.max(1, ...bars.flatMap((g) => g.rows.map((r) => r.value ?? 0)));
  const width = 760;
  const labelWidth = 170;
  const barArea = width - labelWidth - 110;
  const rowHeight = 24;
  const lines: string[] = [];
  let y = 50;
  for (const group of bars) {
    lines.push(`<text x="16" y="${y}" class="group">${escapeXml(group.title)}</text>`);
    y += 12;
    for (const row of group.rows) {
      const value = row.value;
      const length = value === undefined ? 0 : Math.max(1, Math.round((value / max) * barArea));
      const colour = COLOURS[row.id] ?? "#666";
      lines.push(
        `<text x="${labelWidth - 8}" y="${y + 16}" class="label" text-anchor="end">${escapeXml(row.label)}</text>`,
      );
      if (value === undefined) {
        lines.push(`<text x="${labelWidth + 4}" y="${y + 16}" class="na">not measured</text>`);
      } else {
        lines.push(
          `<rect x="${labelWidth}" y="${y + 3}" width="${length}" height="${rowHeight - 6}" fill="${colour}" rx="2"/>`,
        );
        lines.push(
          `<text x="${labelWidth + length + 6}" y="${y + 16}" class="value">${Math.round(value).toLocaleString("en-US")} req/s</text>`,
        );
      }
      y += rowHeight;
    }
    y += 22;
  }
  const height = y + 10;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="Requests per second by path">`,
    "<style>text{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;fill:#222}.title{font-size:16px;font-weight:600}.caption{font-size:11px;fill:#555}.group{font-size:13px;font-weight:600}.label{font-size:12px}.value{font-size:12px}.na{font-size:12px;fill:#999;font-style:italic}</style>",
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="16" y="22" class="title">Requests per second (higher is better)</text>`,
    `<text x="16" y="38" class="caption">${escapeXml(caption)}</text>`,
    ...lines,
    "</svg>",
    "",
  ].join("\n");
}
