// Operators, on a user's page: editing the user and making an invite link.

import { useState } from "preact/hooks";
import type { UserView } from "../../../contracts/admin.js";
import { patch, post } from "../api.js";
import { FormCard, type FormSpec, useForm } from "../forms.js";
import { Card, fmtTime, Notice, useAction } from "../ui.js";

export type User = UserView;

const EDIT_USER: FormSpec<"group" | "credit_line"> = {
  submit: "Save",
  fields: [
    { field: "group", label: "Group", name: "group" },
    { field: "credit_line", label: "Credit line", name: "credit_line", type: "number", min: 0 },
  ],
};

export function EditUserCard({ user, onDone }: { user: User; onDone: () => void }) {
  const form = useForm({ group: user.group, credit_line: String(user.credit_line) });
  const action = useAction();
  const save = (body: Record<string, unknown>, message: string) =>
    action.run(async () => {
      await patchUser(user.id, body);
      onDone();
      return message;
    });
  const submit = () => {
    const n = Number(form.values.credit_line);
    if (!Number.isInteger(n) || n < 0) return action.setError("credit_line: a whole number, 0 or more");
    void save({ group: form.values.group.trim(), credit_line: n }, "Saved.");
  };
  return (
    <FormCard
      title="Edit"
      {...EDIT_USER}
      form={form}
      action={action}
      onSubmit={submit}
      buttons={
        user.status === "enabled" ? (
          <button type="button" class="danger" onClick={() => save({ status: "disabled" }, "Disabled.")}>
            Disable
          </button>
        ) : user.status === "disabled" ? (
          <button type="button" onClick={() => save({ status: "enabled" }, "Enabled.")}>
            Enable
          </button>
        ) : null
      }
    />
  );
}

function patchUser(id: number, body: Record<string, unknown>) {
  return patch(`/api/admin/users/${id}`, body);
}

export function InviteCard({ id }: { id: string }) {
  const [link, setLink] = useState<{ invite_url: string; expires_at: number } | null>(null);
  const action = useAction();
  return (
    <Card title="Invite link">
      <p class="muted">A one-time link where the user sets a password. Making a new one replaces the old.</p>
      <button
        type="button"
        disabled={action.busy}
        onClick={() => action.run(async () => setLink(await post(`/api/admin/users/${id}/invite`)))}
      >
        Make an invite link
      </button>
      {link ? (
        <p>
          <label>
            Invite link (valid until {fmtTime(link.expires_at)})
            <input
              class="mono"
              readOnly
              value={link.invite_url}
              data-testid="invite-url"
              onFocus={(e) => e.currentTarget.select()}
            />
          </label>
        </p>
      ) : null}
      <Notice error={action.error} />
    </Card>
  );
}
