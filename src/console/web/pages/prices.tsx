// Operators: prices per model and the group ratios.

import { useState } from "preact/hooks";
import type { PriceView } from "../../../contracts/admin.js";
import { get, put } from "../api.js";
import { Card, fmtTime, Input, Notice, Page, Select, Table, useAction, useLoad } from "../ui.js";

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

function PriceForm({ price, onDone }: { price: Price | null; onDone: () => void }) {
  const [form, setForm] = useState({
    kind: price?.kind ?? "image",
    name: price?.name ?? "",
    price: price ? String(price.price) : "",
    input_per_million: price ? String(price.input_per_million) : "",
    output_per_million: price ? String(price.output_per_million) : "",
  });
  const action = useAction();
  const set = (k: keyof typeof form) => (e: { currentTarget: HTMLInputElement | HTMLSelectElement }) =>
    setForm({ ...form, [k]: e.currentTarget.value });
  const submit = (e: Event) => {
    e.preventDefault();
    if (!form.name.trim()) return action.setError("name: the model or task name");
    const body: Record<string, unknown> = { kind: form.kind, name: form.name.trim() };
    for (const k of ["price", "input_per_million", "output_per_million"] as const) {
      if (form[k] === "") continue;
      const n = Number(form[k]);
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
    <Card title={price ? `Change ${price.name}` : "Set a price"}>
      <form class="form-grid" onSubmit={submit}>
        <Select
          label="Kind"
          value={form.kind}
          onChange={set("kind")}
          options={[
            ["task", "task"],
            ["image", "image"],
            ["content", "content"],
          ]}
        />
        <Input label="Name" name="price-name" value={form.name} onInput={set("name")} required />
        <Input label="Per call or image" name="price" inputMode="decimal" value={form.price} onInput={set("price")} />
        <Input
          label="Input per million tokens"
          name="input_per_million"
          inputMode="decimal"
          value={form.input_per_million}
          onInput={set("input_per_million")}
        />
        <Input
          label="Output per million tokens"
          name="output_per_million"
          inputMode="decimal"
          value={form.output_per_million}
          onInput={set("output_per_million")}
        />
        <div class="actions">
          <button type="submit" class="primary" disabled={action.busy}>
            Save price
          </button>
        </div>
      </form>
      <Notice error={action.error} ok={action.ok} />
    </Card>
  );
}

function RatioForm({ onDone }: { onDone: () => void }) {
  const [group, setGroup] = useState("");
  const [ratio, setRatio] = useState("1");
  const action = useAction();
  return (
    <form
      class="form-grid"
      onSubmit={(e) => {
        e.preventDefault();
        const n = Number(ratio);
        if (!group.trim()) return action.setError("group: a group name");
        if (!Number.isFinite(n) || n < 0) return action.setError("ratio: a number, 0 or more");
        void action.run(async () => {
          await put(`/api/admin/group-ratios/${encodeURIComponent(group.trim())}`, { ratio: n });
          onDone();
          return `The ratio of ${group.trim()} is ${n}.`;
        });
      }}
    >
      <Input label="Group" name="group" value={group} onInput={(e) => setGroup(e.currentTarget.value)} />
      <Input
        label="Ratio"
        name="ratio"
        inputMode="decimal"
        value={ratio}
        onInput={(e) => setRatio(e.currentTarget.value)}
      />
      <div class="actions">
        <button type="submit" disabled={action.busy}>
          Set ratio
        </button>
      </div>
      <Notice error={action.error} ok={action.ok} />
    </form>
  );
}
