// Operators: batches of redemption codes: generate, export once as CSV, disable a batch or a code.
import type { Static } from "@sinclair/typebox";
import { useState } from "preact/hooks";
import type { RedemptionBatchView, RedemptionCodeView } from "../../../contracts/redemptions.js";
import { get, post, postForText } from "../api.js";
import { FormCard, type FormSpec, useForm } from "../forms.js";
import { Pager, usePagedList } from "../lists.js";
import { fmtQuota, fmtTime, Notice, Page, Table, useAction, useLoad } from "../ui.js";

type Batch = Static<typeof RedemptionBatchView>;
type Code = Static<typeof RedemptionCodeView>;

type GenerateField = "count" | "amount" | "quota" | "expires" | "prefix" | "per_user_limit" | "note";

const GENERATE: FormSpec<GenerateField> = {
  submit: "Generate",
  fields: [
    { field: "count", label: "How many codes", name: "count", type: "number", min: 1, max: 10000, required: true },
    { field: "amount", label: "Each credits (currency)", name: "amount", inputMode: "decimal", hint: "or quota below" },
    { field: "quota", label: "Each credits (quota)", name: "quota", inputMode: "numeric" },
    { field: "expires", label: "Expires", name: "expires", type: "datetime-local", hint: "empty: never" },
    { field: "prefix", label: "Name prefix", name: "prefix", maxLength: 16, hint: "letters and digits" },
    { field: "per_user_limit", label: "Codes per user", name: "per_user_limit", inputMode: "numeric" },
    { field: "note", label: "Note", name: "note", maxLength: 500 },
  ],
};

/** The form's values as the admin API's body: empty fields left out. */
function generateBody(v: Record<GenerateField, string>): Record<string, unknown> {
  const body: Record<string, unknown> = { count: Number(v.count) };
  if (v.amount.trim() !== "") body.amount = Number(v.amount);
  if (v.quota.trim() !== "") body.quota = Number(v.quota);
  if (v.expires !== "") body.expires_at = Math.floor(new Date(v.expires).getTime() / 1000);
  if (v.prefix.trim() !== "") body.prefix = v.prefix.trim();
  if (v.per_user_limit.trim() !== "") body.per_user_limit = Number(v.per_user_limit);
  if (v.note.trim() !== "") body.note = v.note.trim();
  return body;
}

/** Hands the browser a file to save. */
function saveFile(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.click();
  URL.revokeObjectURL(url);
}

export function CodesPage() {
  const form = useForm({ count: "10", amount: "", quota: "", expires: "", prefix: "", per_user_limit: "", note: "" });
  const generate = useAction();
  const action = useAction();
  const { pager, rows, next } = usePagedList<Batch>("/api/admin/redemption-batches", {}, 50);
  const [open, setOpen] = useState<number | null>(null);
  const run = (work: () => Promise<unknown>, message: string) =>
    action.run(async () => {
      await work();
      rows.reload();
      return message;
    });
  return (
    <Page title="Redemption codes">
      <FormCard
        title="Generate a batch"
        {...GENERATE}
        form={form}
        action={generate}
        onSubmit={() =>
          generate.run(async () => {
            const batch = await post<Batch>("/api/admin/redemption-batches", generateBody(form.values));
            rows.reload();
            return `Batch ${batch.id} generated: export it to read its codes (once).`;
          })
        }
      />
      <h2>Batches</h2>
      <Notice error={rows.error ?? action.error} ok={action.ok} />
      <Table
        caption="Batches of redemption codes, newest first"
        rows={rows.data}
        columns={[
          { title: "Batch", cell: (b) => b.id },
          { title: "Prefix", cell: (b) => b.prefix || "—" },
          { title: "Each", numeric: true, cell: (b) => `${b.amount} (${fmtQuota(b.quota)})` },
          { title: "Used", numeric: true, cell: (b) => `${b.used} / ${b.count}` },
          { title: "Per user", numeric: true, cell: (b) => b.per_user_limit ?? "—" },
          { title: "Expires", cell: (b) => (b.expires_at ? fmtTime(b.expires_at) : "never") },
          { title: "Status", cell: (b) => <span class={`badge ${b.status}`}>{b.status}</span> },
          {
            title: "Actions",
            cell: (b) => (
              <span class="actions">
                <button type="button" aria-label={`Codes of batch ${b.id}`} onClick={() => setOpen(b.id)}>
                  Codes
                </button>
                <button
                  type="button"
                  aria-label={`Export batch ${b.id}`}
                  disabled={b.exported_at !== null || action.busy}
                  title={b.exported_at !== null ? `exported ${fmtTime(b.exported_at)}` : "once only"}
                  onClick={() =>
                    run(
                      async () =>
                        saveFile(
                          `redemption-batch-${b.id}.csv`,
                          await postForText(`/api/admin/redemption-batches/${b.id}/export`),
                        ),
                      `Batch ${b.id} exported: keep the file, the codes cannot be read again.`,
                    )
                  }
                >
                  Export CSV
                </button>
                <button
                  type="button"
                  class={b.status === "enabled" ? "danger" : undefined}
                  aria-label={`${b.status === "enabled" ? "Disable" : "Enable"} batch ${b.id}`}
                  disabled={action.busy}
                  onClick={() => {
                    const verb = b.status === "enabled" ? "disable" : "enable";
                    void run(() => post(`/api/admin/redemption-batches/${b.id}/${verb}`), `Batch ${b.id}: ${verb}d.`);
                  }}
                >
                  {b.status === "enabled" ? "Disable" : "Enable"}
                </button>
              </span>
            ),
          },
        ]}
      />
      <Pager pager={pager} nextCursor={next} />
      {open === null ? null : <BatchCodes id={open} />}
    </Page>
  );
}

function BatchCodes({ id }: { id: number }) {
  const codes = useLoad(() => get<Code[]>(`/api/admin/redemption-batches/${id}/codes?limit=1000`), [id]);
  const action = useAction();
  return (
    <>
      <h2>Codes of batch {id}</h2>
      <Notice error={codes.error ?? action.error} ok={action.ok} />
      <Table
        caption={`Codes of batch ${id}, each by its start and end`}
        rows={codes.data}
        columns={[
          { title: "Code", cell: (c) => <code>{c.code}</code> },
          { title: "Status", cell: (c) => <span class={`badge ${c.status}`}>{c.status}</span> },
          { title: "User", cell: (c) => (c.user_id === null ? "—" : <a href={`#/users/${c.user_id}`}>{c.user_id}</a>) },
          { title: "Redeemed", cell: (c) => (c.redeemed_at ? fmtTime(c.redeemed_at) : "—") },
          {
            title: "Disable",
            cell: (c) =>
              c.status === "unused" ? (
                <button
                  type="button"
                  class="danger"
                  aria-label={`Disable code ${c.id}`}
                  disabled={action.busy}
                  onClick={() =>
                    action.run(async () => {
                      await post(`/api/admin/redemption-codes/${c.id}/disable`);
                      codes.reload();
                      return `Code ${c.code} disabled.`;
                    })
                  }
                >
                  Disable
                </button>
              ) : (
                ""
              ),
          },
        ]}
      />
    </>
  );
}
