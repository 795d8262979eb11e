// Users: their tokens; create with limits (the key is shown once), revoke.

import { useState } from "preact/hooks";
import type { TokenView } from "../../../contracts/admin.js";
import { NewTokenBody } from "../../../contracts/console.js";
import { del, get, post } from "../api.js";
import { FormCard, type FormSpec, useForm } from "../forms.js";
import { type Column, check, fmtQuota, fmtTime, Notice, Page, Table, useAction, useLoad } from "../ui.js";

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

const NEW_TOKEN: FormSpec<"name" | "quota_limit" | "expires" | "models"> = {
  submit: "Create token",
  fields: [
    { field: "name", label: "Name", name: "token-name", required: true },
    { field: "quota_limit", label: "Spending limit (quota, empty: none)", name: "quota_limit", type: "number", min: 0 },
    { field: "expires", label: "Expires on (empty: never)", name: "expires", type: "date" },
    { field: "models", label: "Models (comma-separated, empty: all)", name: "models" },
  ],
};

export function TokensPage() {
  const tokens = useLoad(() => get<Token[]>("/console/api/me/tokens"), []);
  const action = useAction();
  const form = useForm({ name: "", quota_limit: "", expires: "", models: "" });
  const [key, setKey] = useState<string | null>(null);
  const submit = () => {
    const v = form.values;
    const body: Record<string, unknown> = { name: v.name.trim() };
    if (v.quota_limit !== "") body.quota_limit = Number(v.quota_limit);
    if (v.expires !== "") body.expires_at = Math.floor(new Date(`${v.expires}T23:59:59Z`).getTime() / 1000);
    const models = v.models
      .split(",")
      .map((m) => m.trim())
      .filter(Boolean);
    if (models.length > 0) body.models = models;
    const problem = check(NewTokenBody, body);
    if (problem) return action.setError(problem);
    void action.run(async () => {
      const created = await post<{ key: string }>("/console/api/me/tokens", body);
      setKey(created.key);
      form.reset();
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
      <FormCard
        title="Create a token"
        {...NEW_TOKEN}
        form={form}
        action={action}
        onSubmit={submit}
        after={key ? <KeyOnce value={key} onDone={() => setKey(null)} /> : null}
      />
    </Page>
  );
}

/** The new key, shown once until the user says it is copied. */
function KeyOnce({ value, onDone }: { value: string; onDone: () => void }) {
  return (
    <div class="key-once" role="status">
      <label>
        Your new key: copy it now, it is not shown again
        <input
          class="mono"
          readOnly
          value={value}
          data-testid="new-token-key"
          onFocus={(e) => e.currentTarget.select()}
        />
      </label>
      <button type="button" onClick={onDone}>
        I have copied it
      </button>
    </div>
  );
}
