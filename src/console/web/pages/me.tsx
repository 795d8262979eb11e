// Users: balance, spend over time by model, and their ledger.
import type { Static } from "@sinclair/typebox";
import { useMemo } from "preact/hooks";
import type { MeAnswer, SpendAnswer } from "../../../contracts/console.js";
import type { RedemptionView } from "../../../contracts/redemptions.js";
import { get, post, query } from "../api.js";
import { TimeChart } from "../chart.js";
import { Choices, type Field, FormCard, useForm } from "../forms.js";
import { Pager, usePaged } from "../lists.js";
import { fmtQuota, Notice, Page, Stats, useAction, useLoad } from "../ui.js";
import { type LedgerEntry, LedgerTable } from "./user-lists.js";

export type Me = Static<typeof MeAnswer>;

type Spend = Static<typeof SpendAnswer>;

const PERIOD: Array<Field<"days">> = [
  {
    field: "days",
    kind: "select",
    label: "Period",
    options: [
      ["7", "Last 7 days"],
      ["30", "Last 30 days"],
      ["90", "Last 90 days"],
    ],
  },
];

export function MePage() {
  const me = useLoad(() => get<Me>("/console/api/me"), []);
  const period = useForm({ days: "30" });
  const days = period.values.days;
  const spend = useLoad(() => get<Spend>(`/console/api/me/spend${query({ days, by: "model" })}`), [days]);
  const chart = useMemo(() => {
    const buckets = spend.data?.buckets ?? [];
    const keys = [...new Set(buckets.flatMap((b) => Object.keys(b.series)))].sort();
    return {
      x: buckets.map((b) => b.start),
      series: keys.map((k) => ({ label: k, values: buckets.map((b) => b.series[k] ?? 0) })),
    };
  }, [spend.data]);
  const {
    pager,
    rows: ledger,
    next,
  } = usePaged((after) => get<LedgerEntry[]>(`/console/api/me/ledger${query({ after, limit: 25 })}`), [], 25);
  const u = me.data;
  return (
    <Page title="Balance and spend">
      <Notice error={me.error ?? spend.error} />
      <Stats
        items={[
          { label: "Balance", value: fmtQuota(u?.quota), testId: "my-balance" },
          { label: "Spent so far", value: fmtQuota(u?.used_quota) },
          { label: "Credit line", value: fmtQuota(u?.credit_line) },
        ]}
      />
      <RedeemCard onRedeemed={() => me.reload()} />
      <Choices fields={PERIOD} form={period} />
      <TimeChart title="Spend by model" x={chart.x} series={chart.series} bars />
      <h2>Ledger</h2>
      <Notice error={ledger.error} />
      <LedgerTable rows={ledger.data} caption="My ledger, newest first" />
      <Pager pager={pager} nextCursor={next} />
    </Page>
  );
}

/** A user redeems a code: the balance is credited once (docs/redemption-codes.md). */
function RedeemCard({ onRedeemed }: { onRedeemed: () => void }) {
  const form = useForm({ code: "" });
  const action = useAction();
  return (
    <FormCard
      title="Redeem a code"
      submit="Redeem"
      fields={[{ field: "code", label: "Code", name: "code", autoComplete: "off", required: true, maxLength: 100 }]}
      form={form}
      action={action}
      onSubmit={() =>
        action.run(async () => {
          const done = await post<Static<typeof RedemptionView>>("/console/api/me/redemptions", {
            code: form.values.code.trim(),
          });
          form.reset();
          onRedeemed();
          return `Credited ${done.amount} (${fmtQuota(done.quota)} quota). Balance: ${fmtQuota(done.balance)}.`;
        })
      }
    />
  );
}
