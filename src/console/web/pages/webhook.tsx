// Users: their default webhook URL and the secret that signs deliveries (rotated here).
import { useEffect, useState } from "preact/hooks";
import { get, post, put } from "../api.js";
import { Form, useForm } from "../forms.js";
import { Card, Input, Notice, Page, useAction, useLoad } from "../ui.js";

export function WebhookPage() {
  const hook = useLoad(() => get<{ url: string | null; secret: string }>("/console/api/me/webhook"), []);
  const form = useForm({ url: "" });
  const [secret, setSecret] = useState<string | null>(null);
  const [shown, setShown] = useState(false);
  const action = useAction();
  useEffect(() => {
    if (hook.data) {
      form.setValues({ url: hook.data.url ?? "" });
      setSecret(hook.data.secret);
    }
  }, [hook.data]);
  return (
    <Page title="Webhook">
      <Notice error={hook.error ?? action.error} ok={action.ok} />
      <Card title="Default webhook URL">
        <p class="muted">Task events of your tasks go here when a submit names no callback URL of its own.</p>
        <Form
          fields={[
            {
              field: "url",
              label: "Webhook URL (empty: none)",
              name: "webhook_url",
              type: "url",
              disabled: hook.data === null,
            },
          ]}
          submit="Save URL"
          form={form}
          action={action}
          onSubmit={() => {
            const value = form.values.url.trim();
            if (value !== "" && !/^https?:\/\//.test(value)) return action.setError("url: an http or https URL");
            void action.run(async () => {
              await put("/console/api/me/webhook", { url: value === "" ? null : value });
              return value === "" ? "The webhook URL is removed." : "The webhook URL is saved.";
            });
          }}
        />
      </Card>
      <Card title="Signing secret">
        <p class="muted">Each delivery is signed with this secret; check the signature before trusting a delivery.</p>
        <Input
          label="Secret"
          name="secret"
          class="mono"
          type={shown ? "text" : "password"}
          readOnly
          value={secret ?? ""}
          autoComplete="off"
        />
        <div class="actions">
          <button type="button" onClick={() => setShown(!shown)} aria-pressed={shown}>
            {shown ? "Hide" : "Show"}
          </button>
          <button
            type="button"
            class="danger"
            disabled={action.busy}
            onClick={() =>
              action.run(async () => {
                const r = await post<{ secret: string }>("/console/api/me/webhook/rotate-secret");
                setSecret(r.secret);
                return "A new secret is in force; the old one no longer signs.";
              })
            }
          >
            Rotate secret
          </button>
        </div>
      </Card>
    </Page>
  );
}
