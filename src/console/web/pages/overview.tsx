// The operator's overview: requests, spend and errors over time by surface, model or channel,
// tasks by state, open charges, and a live view of the last minutes refreshing itself.
import type { Static } from "@sinclair/typebox";
import { useEffect, useMemo, useState } from "preact/hooks";
import type { OverviewView } from "../../../contracts/records.js";
import { get, query } from "../api.js";
import { Bars, type ChartSeries, TimeChart } from "../chart.js";
import { Choices, type Field, useForm } from "../forms.js";
import { Card, fmtQuota, Notice, Page, Stats, useLoad } from "../ui.js";

export type Overview = Static<typeof OverviewView>;
type Point = Overview["buckets"][number]["series"][string];

type Metric = keyof Point;

/** One series per key of the buckets, for one metric. */
export function seriesOf(o: Overview | null, metric: Metric): { x: number[]; series: ChartSeries[] } {
  if (!o) return { x: [], series: [] };
  const keys = new Set<string>();
  for (const b of o.buckets) for (const k of Object.keys(b.series)) keys.add(k);
  return {
    x: o.buckets.map((b) => b.start),
    series: [...keys].sort().map((k) => ({ label: k, values: o.buckets.map((b) => b.series[k]?.[metric] ?? 0) })),
  };
}

const RANGES: Array<[string, string]> = [
  ["60", "Last hour"],
  ["360", "Last 6 hours"],
  ["1440", "Last day"],
  ["10080", "Last 7 days"],
  ["43200", "Last 30 days"],
];
// Buckets of whole hours are read from the usage totals, which outlive the request log's rows;
// finer ones (the last hours) from the rows themselves.
const BUCKET: Record<string, number> = { "60": 60, "360": 300, "1440": 3600, "10080": 3600 * 6, "43200": 86_400 };

const CHOICES: Array<Field<"by" | "minutes">> = [
  {
    field: "by",
    kind: "select",
    label: "Grouped by",
    options: [
      ["surface", "Surface"],
      ["model", "Model"],
      ["channel", "Channel"],
    ],
  },
  { field: "minutes", kind: "select", label: "Time range", options: RANGES },
];

export function OverviewPage() {
  const choice = useForm({ by: "model", minutes: "60" });
  const { by, minutes } = choice.values;
  const data = useLoad(
    () => get<Overview>(`/api/admin/overview${query({ minutes, bucket_seconds: BUCKET[minutes], by })}`),
    [by, minutes],
  );
  const requests = useMemo(() => seriesOf(data.data, "requests"), [data.data]);
  const spend = useMemo(() => seriesOf(data.data, "spend"), [data.data]);
  const errors = useMemo(() => seriesOf(data.data, "errors"), [data.data]);
  const totalSpend = data.data?.buckets.reduce((sum, b) => sum + b.spend, 0) ?? null;
  return (
    <Page title="Overview">
      <Choices fields={CHOICES} form={choice} />
      <Notice error={data.error} />
      <Stats
        items={[
          { label: "Spend in range", value: fmtQuota(totalSpend), testId: "spend-total" },
          {
            label: "Open charges",
            value: data.data ? `${data.data.open_charges.count} (${fmtQuota(data.data.open_charges.quota)})` : "—",
          },
        ]}
      />
      <div class="grid2">
        <TimeChart title={`Spend by ${by}`} x={spend.x} series={spend.series} bars />
        <TimeChart title={`Requests by ${by}`} x={requests.x} series={requests.series} />
        <TimeChart title={`Errors by ${by}`} x={errors.x} series={errors.series} />
        <Bars title="Tasks by state" values={data.data?.tasks_by_state ?? {}} />
      </div>
      <LiveView by={by} />
    </Page>
  );
}

/** The last ten minutes in ten-second buckets, fetched again every ten seconds. */
function LiveView({ by }: { by: string }) {
  const [data, setData] = useState<Overview | null>(null);
  const [updated, setUpdated] = useState<string>("");
  useEffect(() => {
    let live = true;
    const load = () =>
      get<Overview>(`/api/admin/overview${query({ minutes: 10, bucket_seconds: 10, by })}`).then(
        (o) => {
          if (!live) return;
          setData(o);
          setUpdated(new Date().toISOString().slice(11, 19));
        },
        () => {},
      );
    void load();
    const timer = setInterval(load, 10_000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [by]);
  const requests = useMemo(() => seriesOf(data, "requests"), [data]);
  return (
    <Card title="Live: the last 10 minutes">
      <p class="muted" aria-live="polite">
        Refreshes every 10 seconds{updated ? `; updated ${updated} UTC` : ""}.
      </p>
      <TimeChart title={`Requests per 10 s by ${by}`} x={requests.x} series={requests.series} height={180} />
    </Card>
  );
}
