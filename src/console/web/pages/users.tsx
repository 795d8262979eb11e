// Operators: the users list (search, paging, create) and one user's page.

import { useState } from "preact/hooks";
import { CreateUserBody } from "../../../contracts/admin.js";
import { get, post } from "../api.js";
import { Filters, FormCard, type FormSpec, useForm } from "../forms.js";
import { Pager, usePagedList } from "../lists.js";
import { navigate } from "../router.js";
import { Card, check, fmtQuota, fmtTime, Notice, Page, Stats, Table, useAction, useLoad } from "../ui.js";
import { EditUserCard, InviteCard, type User } from "./user-cards.js";
import { UserLists } from "./user-lists.js";

const PAGE = 25;

export function UsersPage() {
  const typed = useForm({ q: "" });
  const [search, setSearch] = useState("");
  const { pager, rows: users, next: nextCursor } = usePagedList<User>("/api/admin/users", { q: search }, PAGE);
  const rows = users.data;
  return (
    <Page title="Users">
      <Filters
        button="Search"
        onApply={() => {
          pager.reset();
          setSearch(typed.values.q.trim());
        }}
        fields={[{ field: "q", label: "Search by name or email", type: "search", name: "q" }]}
        form={typed}
      />
      <Notice error={users.error} />
      <Table
        caption="Users"
        rows={rows}
        columns={[
          { title: "Name", cell: (u) => <a href={`/console/users/${u.id}`}>{u.name}</a> },
          { title: "Email", cell: (u) => u.email ?? "—" },
          { title: "Balance", numeric: true, cell: (u) => fmtQuota(u.quota) },
          { title: "Credit line", numeric: true, cell: (u) => fmtQuota(u.credit_line) },
          { title: "Used", numeric: true, cell: (u) => fmtQuota(u.used_quota) },
          { title: "Status", cell: (u) => <span class={`badge ${u.status}`}>{u.status}</span> },
        ]}
      />
      <Pager pager={pager} nextCursor={nextCursor} />
      <CreateUserCard />
    </Page>
  );
}

const NEW_USER: FormSpec<"name" | "group" | "quota" | "credit_line"> = {
  submit: "Create user",
  fields: [
    { field: "name", label: "Name", name: "name", required: true },
    { field: "group", label: "Group", name: "group", required: true },
    { field: "quota", label: "Initial quota", name: "quota", type: "number", min: 0 },
    { field: "credit_line", label: "Credit line", name: "credit_line", type: "number", min: 0 },
  ],
};

function CreateUserCard() {
  const form = useForm({ name: "", group: "default", quota: "0", credit_line: "0" });
  const action = useAction();
  const submit = () => {
    const v = form.values;
    const body = {
      name: v.name.trim(),
      group: v.group.trim(),
      quota: Number(v.quota),
      credit_line: Number(v.credit_line),
    };
    const problem = check(CreateUserBody, body);
    if (problem) return action.setError(problem);
    void action.run(async () => {
      const created = await post<{ id: number }>("/api/admin/users", body);
      navigate(`/users/${created.id}`);
    });
  };
  return <FormCard title="Create a user" {...NEW_USER} form={form} action={action} onSubmit={submit} />;
}

export function UserPage({ id }: { id: string }) {
  const user = useLoad(() => get<User>(`/api/admin/users/${id}`), [id]);
  const u = user.data;
  return (
    <Page title={u ? `User ${u.name}` : "User"}>
      <Notice error={user.error} />
      <Stats
        items={[
          { label: "Balance", value: fmtQuota(u?.quota), testId: "user-balance" },
          { label: "Credit line", value: fmtQuota(u?.credit_line) },
          { label: "Used", value: fmtQuota(u?.used_quota) },
          { label: "Status", value: u?.status ?? "—" },
        ]}
      />
      <div class="grid2">
        <TopUpCard id={id} onDone={user.reload} />
        {u ? <EditUserCard user={u} onDone={user.reload} /> : <Card title="Edit">Loading…</Card>}
      </div>
      <InviteCard id={id} />
      <UserLists id={id} stamp={u?.quota} />
      <p class="muted">Created {fmtTime(u?.created_at)}.</p>
    </Page>
  );
}

const TOP_UP: FormSpec<"amount" | "reference" | "note"> = {
  submit: "Top up",
  fields: [
    { field: "amount", label: "Amount (quota)", name: "amount", type: "number", min: 1, required: true },
    {
      field: "reference",
      label: "Reference",
      name: "reference",
      hint: "An invoice or payment id; a repeated reference applies once.",
    },
    { field: "note", label: "Note", name: "note" },
  ],
};

function TopUpCard({ id, onDone }: { id: string; onDone: () => void }) {
  const form = useForm({ amount: "", reference: "", note: "" });
  const action = useAction();
  const submit = () => {
    const values = form.values;
    const n = Number(values.amount);
    if (!Number.isInteger(n) || n < 1) return action.setError("amount: a whole number of at least 1");
    void action.run(async () => {
      const body: Record<string, unknown> = { amount: n };
      if (values.reference.trim()) body.reference = values.reference.trim();
      if (values.note.trim()) body.note = values.note.trim();
      const done = await post<{ applied: boolean; quota: number }>(`/api/admin/users/${id}/topup`, body);
      onDone();
      form.setValues((v) => ({ ...v, amount: "" }));
      return done.applied
        ? `Topped up; the balance is ${fmtQuota(done.quota)}.`
        : "This reference was applied before: nothing changed.";
    });
  };
  return <FormCard title="Top up" {...TOP_UP} form={form} action={action} onSubmit={submit} />;
}
