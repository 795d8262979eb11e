// Time charts drawn by uPlot into a box of fixed height (no layout shift while data arrives).
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#4b5563"];

const COMPACT = new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 1 });
/** Axis numbers short enough for the axis: 1.5M, 250K. */
const compact = (n: number) => COMPACT.format(n);

export interface ChartSeries {
  label: string;
  values: number[];
}

export function TimeChart({
  title,
  x,
  series,
  height = 220,
  bars = false,
}: {
  title: string;
  /** Unix seconds of each point. */
  x: number[];
  series: ChartSeries[];
  height?: number;
  bars?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const shown = series.length > 0 ? series : [{ label: "none", values: x.map(() => 0) }];
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height: height - 48,
      legend: { show: true, live: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true } },
      axes: [{}, { size: 64, values: (_u, ticks) => ticks.map(compact) }],
      series: [
        {},
        ...shown.map((s, i) => ({
          label: s.label,
          stroke: COLORS[i % COLORS.length],
          fill: `${COLORS[i % COLORS.length]}22`,
          width: 2,
          points: { show: !bars && x.length < 40 },
          paths: bars ? uPlot.paths.bars?.({ size: [0.8, 40] }) : undefined,
        })),
      ],
    };
    const plot = new uPlot(opts, [x, ...shown.map((s) => s.values)] as uPlot.AlignedData, el);
    const resize = new ResizeObserver(() =>
      plot.setSize({ width: Math.max(200, el.clientWidth), height: height - 48 }),
    );
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [x, series, height, bars]);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} class="chart-box" style={{ height: `${height}px` }} role="img" aria-label={title} />
    </figure>
  );
}

/** A bar per key (tasks by state): drawn as plain boxes, no library needed. */
export function Bars({ title, values }: { title: string; values: Record<string, number> }) {
  const entries = Object.entries(values);
  const max = Math.max(1, ...entries.map(([, v]) => v));
  return (
    <figure class="chart bars">
      <figcaption>{title}</figcaption>
      <ul class="bar-list" aria-label={title}>
        {entries.length === 0 ? <li>No tasks.</li> : null}
        {entries.map(([k, v]) => (
          <li key={k}>
            <span class="bar-label">{k}</span>
            <progress max={max} value={v} aria-label={`${k}: ${v}`} />
            <span class="bar-value">{v.toLocaleString("en")}</span>
          </li>
        ))}
      </ul>
    </figure>
  );
}
