// Operators: the console's own settings (self sign-up).
import { useEffect, useState } from "preact/hooks";
import { get, put } from "../api.js";
import { Notice, Page, useAction, useLoad } from "../ui.js";

export function SettingsPage() {
  const settings = useLoad(() => get<{ self_signup: boolean }>("/api/admin/console-settings"), []);
  const action = useAction();
  // Shown as asked at once; put back when the server refuses.
  const [on, setOn] = useState(false);
  useEffect(() => setOn(settings.data?.self_signup ?? false), [settings.data]);
  return (
    <Page title="Console settings">
      <Notice error={settings.error ?? action.error} ok={action.ok} />
      <section class="card">
        <h2>Self sign-up</h2>
        <p class="muted">When on, anyone can create a user account from the sign-in page.</p>
        <label class="check">
          <input
            type="checkbox"
            checked={on}
            disabled={settings.data === null || action.busy}
            onChange={(e) => {
              const self_signup = e.currentTarget.checked;
              setOn(self_signup);
              void action.run(async () => {
                try {
                  await put("/api/admin/console-settings", { self_signup });
                } catch (err) {
                  setOn(!self_signup);
                  throw err;
                }
                return self_signup ? "Self sign-up is on." : "Self sign-up is off.";
              });
            }}
          />
          Let people sign up by themselves
        </label>
      </section>
    </Page>
  );
}
