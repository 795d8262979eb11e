// Operators: prices per model and the group ratios.

import { useState } from "preact/hooks";
import type { PriceView } from "../../../contracts/admin.js";
import { get, put } from "../api.js";
import { Form, FormCard, type FormSpec, useForm } from "../forms.js";
import { Card, fmtTime, Notice, Page, Table, useAction, useLoad } from "../ui.js";

type Price = PriceView;

export function PricesPage() {
  const prices = useLoad(() => get<Price[]>("/api/admin/prices"), []);
  const ratios = useLoad(() => get<Array<{ group: string; ratio: number }>>("/api/admin/group-ratios"), []);
  const [editing, setEditing] = useState<Price | null>(null);
  return (
    <Page title="Prices and group ratios">
      <Notice error={prices.error ?? ratios.error} />
      <Table
        caption="Prices"
        rows={prices.data}
        columns={[
          { title: "Kind", cell: (p) => p.kind },
          { title: "Name", cell: (p) => p.name },
          { title: "Per call", numeric: true, cell: (p) => p.price },
          { title: "Input / M", numeric: true, cell: (p) => p.input_per_million },
          { title: "Output / M", numeric: true, cell: (p) => p.output_per_million },
          { title: "Cached", numeric: true, cell: (p) => p.cached_ratio },
          { title: "Updated", cell: (p) => fmtTime(p.updated_at) },
          {
            title: "Change",
            cell: (p) => (
              <button type="button" aria-label={`Change the price of ${p.name}`} onClick={() => setEditing(p)}>
                Change
              </button>
            ),
          },
        ]}
      />
      <div class="grid2">
        <PriceForm key={editing ? `${editing.kind}:${editing.name}` : "new"} price={editing} onDone={prices.reload} />
        <Card title="Group ratios">
          <Table
            caption="Group ratios"
            rows={ratios.data}
            columns={[
              { title: "Group", cell: (r) => r.group },
              { title: "Ratio", numeric: true, cell: (r) => r.ratio },
            ]}
          />
          <RatioForm onDone={ratios.reload} />
        </Card>
      </div>
    </Page>
  );
}

const PRICE_FORM: FormSpec<"kind" | "name" | "price" | "input_per_million" | "output_per_million"> = {
  submit: "Save price",
  fields: [
    {
      field: "kind",
      kind: "select",
      label: "Kind",
      options: [
        ["task", "task"],
        ["image", "image"],
        ["content", "content"],
      ],
    },
    { field: "name", label: "Name", name: "price-name", required: true },
    { field: "price", label: "Per call or image", name: "price", inputMode: "decimal" },
    { field: "input_per_million", label: "Input per million tokens", name: "input_per_million", inputMode: "decimal" },
    {
      field: "output_per_million",
      label: "Output per million tokens",
      name: "output_per_million",
      inputMode: "decimal",
    },
  ],
};

function PriceForm({ price, onDone }: { price: Price | null; onDone: () => void }) {
  const form = useForm({
    kind: price?.kind ?? "image",
    name: price?.name ?? "",
    price: price ? String(price.price) : "",
    input_per_million: price ? String(price.input_per_million) : "",
    output_per_million: price ? String(price.output_per_million) : "",
  });
  const action = useAction();
  const submit = () => {
    const v = form.values;
    if (!v.name.trim()) return action.setError("name: the model or task name");
    const body: Record<string, unknown> = { kind: v.kind, name: v.name.trim() };
    for (const k of ["price", "input_per_million", "output_per_million"] as const) {
      if (v[k] === "") continue;
      const n = Number(v[k]);
      if (!Number.isFinite(n) || n < 0) return action.setError(`${k}: a number, 0 or more`);
      body[k] = n;
    }
    void action.run(async () => {
      await put("/api/admin/prices", body);
      onDone();
      return `The price of ${body.name} is set.`;
    });
  };
  return (
    <FormCard
      title={price ? `Change ${price.name}` : "Set a price"}
      {...PRICE_FORM}
      form={form}
      action={action}
      onSubmit={submit}
    />
  );
}

function RatioForm({ onDone }: { onDone: () => void }) {
  const form = useForm({ group: "", ratio: "1" });
  const action = useAction();
  const submit = () => {
    const group = form.values.group.trim();
    const n = Number(form.values.ratio);
    if (!group) return action.setError("group: a group name");
    if (!Number.isFinite(n) || n < 0) return action.setError("ratio: a number, 0 or more");
    void action.run(async () => {
      await put(`/api/admin/group-ratios/${encodeURIComponent(group)}`, { ratio: n });
      onDone();
      return `The ratio of ${group} is ${n}.`;
    });
  };
  return (
    <Form
      fields={[
        { field: "group", label: "Group", name: "group" },
        { field: "ratio", label: "Ratio", name: "ratio", inputMode: "decimal" },
      ]}
      submit="Set ratio"
      primary={false}
      form={form}
      action={action}
      notice
      onSubmit={submit}
    />
  );
}
