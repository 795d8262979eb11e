// Users: their tokens; create with limits (the key is shown once), revoke.

import { useState } from "preact/hooks";
import type { TokenView } from "../../../contracts/admin.js";
import { NewTokenBody } from "../../../contracts/console.js";
import { del, get, post } from "../api.js";
import { Card, type Column, check, fmtQuota, fmtTime, Input, Notice, Page, Table, useAction, useLoad } from "../ui.js";

type Token = TokenView;

/** A token's columns, in the user's own list and in an operator's view of a user. */
export const TOKEN_COLUMNS: Array<Column<Token>> = [
  { title: "Name", cell: (t) => t.name },
  { title: "Status", cell: (t) => <span class={`badge ${t.status}`}>{t.status}</span> },
  { title: "Used", numeric: true, cell: (t) => fmtQuota(t.used_quota) },
  { title: "Limit", numeric: true, cell: (t) => fmtQuota(t.quota_limit) },
  { title: "Expires", cell: (t) => fmtTime(t.expires_at) },
  { title: "Models", cell: (t) => t.models?.join(", ") ?? "all" },
];

export function TokensPage() {
  const tokens = useLoad(() => get<Token[]>("/console/api/me/tokens"), []);
  const action = useAction();
  const [form, setForm] = useState({ name: "", quota_limit: "", expires: "", models: "" });
  const [key, setKey] = useState<string | null>(null);
  const set = (k: keyof typeof form) => (e: { currentTarget: HTMLInputElement }) =>
    setForm({ ...form, [k]: e.currentTarget.value });
  const submit = (e: Event) => {
    e.preventDefault();
    const body: Record<string, unknown> = { name: form.name.trim() };
    if (form.quota_limit !== "") body.quota_limit = Number(form.quota_limit);
    if (form.expires !== "") body.expires_at = Math.floor(new Date(`${form.expires}T23:59:59Z`).getTime() / 1000);
    const models = form.models
      .split(",")
      .map((m) => m.trim())
      .filter(Boolean);
    if (models.length > 0) body.models = models;
    const problem = check(NewTokenBody, body);
    if (problem) return action.setError(problem);
    void action.run(async () => {
      const created = await post<{ key: string }>("/console/api/me/tokens", body);
      setKey(created.key);
      setForm({ name: "", quota_limit: "", expires: "", models: "" });
      tokens.reload();
    });
  };
  const revoke = (t: Token) =>
    action.run(async () => {
      await del(`/console/api/me/tokens/${t.id}`);
      tokens.reload();
      return `${t.name} is revoked.`;
    });
  return (
    <Page title="Tokens">
      <Notice error={tokens.error} />
      <Table
        caption="My tokens"
        rows={tokens.data}
        columns={[
          ...TOKEN_COLUMNS,
          {
            title: "Revoke",
            cell: (t) =>
              t.status === "revoked" ? (
                ""
              ) : (
                <button
                  type="button"
                  class="danger"
                  aria-label={`Revoke ${t.name}`}
                  onClick={() => revoke(t)}
                  disabled={action.busy}
                >
                  Revoke
                </button>
              ),
          },
        ]}
      />
      <Card title="Create a token">
        <form class="form-grid" onSubmit={submit}>
          <Input label="Name" name="token-name" value={form.name} onInput={set("name")} required />
          <Input
            label="Spending limit (quota, empty: none)"
            name="quota_limit"
            type="number"
            min={0}
            value={form.quota_limit}
            onInput={set("quota_limit")}
          />
          <Input
            label="Expires on (empty: never)"
            name="expires"
            type="date"
            value={form.expires}
            onInput={set("expires")}
          />
          <Input
            label="Models (comma-separated, empty: all)"
            name="models"
            value={form.models}
            onInput={set("models")}
          />
          <div class="actions">
            <button type="submit" class="primary" disabled={action.busy}>
              Create token
            </button>
          </div>
        </form>
        <Notice error={action.error} ok={action.ok} />
        {key ? (
          <div class="key-once" role="status">
            <label>
              Your new key: copy it now, it is not shown again
              <input
                class="mono"
                readOnly
                value={key}
                data-testid="new-token-key"
                onFocus={(e) => e.currentTarget.select()}
              />
            </label>
            <button type="button" onClick={() => setKey(null)}>
              I have copied it
            </button>
          </div>
        ) : null}
      </Card>
    </Page>
  );
}
