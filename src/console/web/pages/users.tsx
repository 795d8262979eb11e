// Operators: the users list (search, paging, create) and one user's page.

import { useState } from "preact/hooks";
import { CreateUserBody } from "../../../contracts/admin.js";
import { get, post } from "../api.js";
import { navigate } from "../router.js";
import {
  Card,
  check,
  Filters,
  fmtQuota,
  fmtTime,
  Input,
  Notice,
  Page,
  Pager,
  Table,
  useAction,
  useLoad,
  usePagedList,
} from "../ui.js";
import { EditUserCard, InviteCard, type User } from "./user-cards.js";
import { UserLists } from "./user-lists.js";

const PAGE = 25;

export function UsersPage() {
  const [q, setQ] = useState("");
  const [search, setSearch] = useState("");
  const { pager, rows: users, next: nextCursor } = usePagedList<User>("/api/admin/users", { q: search }, PAGE);
  const rows = users.data;
  return (
    <Page title="Users">
      <Filters
        button="Search"
        onApply={() => {
          pager.reset();
          setSearch(q.trim());
        }}
      >
        <Input
          label="Search by name or email"
          type="search"
          name="q"
          value={q}
          onInput={(e) => setQ(e.currentTarget.value)}
        />
      </Filters>
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

function CreateUserCard() {
  const [form, setForm] = useState({ name: "", group: "default", quota: "0", credit_line: "0" });
  const action = useAction();
  const set = (k: keyof typeof form) => (e: { currentTarget: HTMLInputElement }) =>
    setForm({ ...form, [k]: e.currentTarget.value });
  const submit = (e: Event) => {
    e.preventDefault();
    const body = {
      name: form.name.trim(),
      group: form.group.trim(),
      quota: Number(form.quota),
      credit_line: Number(form.credit_line),
    };
    const problem = check(CreateUserBody, body);
    if (problem) return action.setError(problem);
    void action.run(async () => {
      const created = await post<{ id: number }>("/api/admin/users", body);
      navigate(`/users/${created.id}`);
    });
  };
  return (
    <Card title="Create a user">
      <form class="form-grid" onSubmit={submit}>
        <Input label="Name" name="name" value={form.name} onInput={set("name")} required />
        <Input label="Group" name="group" value={form.group} onInput={set("group")} required />
        <Input label="Initial quota" name="quota" type="number" min={0} value={form.quota} onInput={set("quota")} />
        <Input
          label="Credit line"
          name="credit_line"
          type="number"
          min={0}
          value={form.credit_line}
          onInput={set("credit_line")}
        />
        <div class="actions">
          <button type="submit" class="primary" disabled={action.busy}>
            Create user
          </button>
        </div>
      </form>
      <Notice error={action.error} ok={action.ok} />
    </Card>
  );
}

export function UserPage({ id }: { id: string }) {
  const user = useLoad(() => get<User>(`/api/admin/users/${id}`), [id]);
  const u = user.data;
  return (
    <Page title={u ? `User ${u.name}` : "User"}>
      <Notice error={user.error} />
      <div class="stats">
        <div class="stat">
          <span>Balance</span>
          <strong data-testid="user-balance">{fmtQuota(u?.quota)}</strong>
        </div>
        <div class="stat">
          <span>Credit line</span>
          <strong>{fmtQuota(u?.credit_line)}</strong>
        </div>
        <div class="stat">
          <span>Used</span>
          <strong>{fmtQuota(u?.used_quota)}</strong>
        </div>
        <div class="stat">
          <span>Status</span>
          <strong>{u?.status ?? "—"}</strong>
        </div>
      </div>
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

function TopUpCard({ id, onDone }: { id: string; onDone: () => void }) {
  const [amount, setAmount] = useState("");
  const [reference, setReference] = useState("");
  const [note, setNote] = useState("");
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    const n = Number(amount);
    if (!Number.isInteger(n) || n < 1) return action.setError("amount: a whole number of at least 1");
    void action.run(async () => {
      const body: Record<string, unknown> = { amount: n };
      if (reference.trim()) body.reference = reference.trim();
      if (note.trim()) body.note = note.trim();
      const done = await post<{ applied: boolean; quota: number }>(`/api/admin/users/${id}/topup`, body);
      onDone();
      setAmount("");
      return done.applied
        ? `Topped up; the balance is ${fmtQuota(done.quota)}.`
        : "This reference was applied before: nothing changed.";
    });
  };
  return (
    <Card title="Top up">
      <form class="form-grid" onSubmit={submit}>
        <Input
          label="Amount (quota)"
          name="amount"
          type="number"
          min={1}
          value={amount}
          onInput={(e) => setAmount(e.currentTarget.value)}
          required
        />
        <Input
          label="Reference"
          name="reference"
          value={reference}
          onInput={(e) => setReference(e.currentTarget.value)}
          hint="An invoice or payment id; a repeated reference applies once."
        />
        <Input label="Note" name="note" value={note} onInput={(e) => setNote(e.currentTarget.value)} />
        <div class="actions">
          <button type="submit" class="primary" disabled={action.busy}>
            Top up
          </button>
        </div>
      </form>
      <Notice error={action.error} ok={action.ok} />
    </Card>
  );
}
