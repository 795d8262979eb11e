// Operators: a channel's key pool (masked keys, their state and counters; import, disable,
// enable, remove) and the bulk changes of the channels of a tag.
import type { ChannelKeyView } from "../../../contracts/admin.js";
import { del, get, patch, post } from "../api.js";
import { FormCard, useForm } from "../forms.js";
import { fmtTime, Notice, Table, useAction, useLoad } from "../ui.js";

export function ChannelKeys({ channel, onClose }: { channel: { id: number; name: string }; onClose: () => void }) {
  const keys = useLoad(() => get<ChannelKeyView[]>(`/api/admin/channels/${channel.id}/keys`), [channel.id]);
  const action = useAction();
  const form = useForm({ text: "" });
  const toggle = (k: ChannelKeyView) =>
    action.run(async () => {
      await patch(`/api/admin/channels/${channel.id}/keys/${k.id}`, { enabled: !k.enabled });
      keys.reload();
      return `Key ${k.key} ${k.enabled ? "disabled" : "enabled"}.`;
    });
  const remove = (k: ChannelKeyView) =>
    action.run(async () => {
      await del(`/api/admin/channels/${channel.id}/keys/${k.id}`);
      keys.reload();
      return `Key ${k.key} removed.`;
    });
  const importKeys = () =>
    action.run(async () => {
      const r = await post<{ added: ChannelKeyView[]; duplicates: number }>(`/api/admin/channels/${channel.id}/keys`, {
        text: form.values.text,
      });
      form.reset();
      keys.reload();
      return `${r.added.length} key(s) added${r.duplicates > 0 ? `, ${r.duplicates} already in the pool` : ""}.`;
    });
  return (
    <>
      <Notice error={keys.error} />
      <FormCard
        title={`Add keys to ${channel.name}`}
        fields={[
          {
            field: "text",
            kind: "area",
            label: "Keys, one a line (lines starting with # are skipped)",
            name: "text",
            autoComplete: "off",
          },
        ]}
        submit="Add keys"
        form={form}
        action={action}
        onSubmit={() => void importKeys()}
        buttons={
          <button type="button" onClick={onClose}>
            Close
          </button>
        }
      />
      <Table
        caption={`Keys of ${channel.name}`}
        rows={keys.data}
        columns={[
          { title: "Key", cell: (k) => k.key },
          {
            title: "State",
            cell: (k) => (
              <span class={`badge ${k.state === "live" ? "enabled" : k.state}`} title={k.dead_reason ?? ""}>
                {k.state}
              </span>
            ),
          },
          { title: "Calls", numeric: true, cell: (k) => k.calls },
          { title: "Failures", numeric: true, cell: (k) => k.failures },
          {
            title: "Last error",
            cell: (k) => (k.last_error ? `${k.last_error} (${fmtTime(k.last_error_at)})` : "—"),
          },
          {
            title: "Dead since",
            cell: (k) => (k.dead_at ? `${fmtTime(k.dead_at)}: ${k.dead_reason ?? ""}` : "—"),
          },
          {
            title: "Actions",
            cell: (k) => (
              <span class="row-actions">
                <button
                  type="button"
                  aria-label={`${k.enabled ? "Disable" : "Enable"} key ${k.key}`}
                  onClick={() => toggle(k)}
                  disabled={action.busy}
                >
                  {k.enabled ? "Disable" : "Enable"}
                </button>
                <button
                  type="button"
                  aria-label={`Remove key ${k.key}`}
                  onClick={() => remove(k)}
                  disabled={action.busy}
                >
                  Remove
                </button>
              </span>
            ),
          },
        ]}
      />
    </>
  );
}

/** Bulk changes of every channel carrying a tag. */
export function TagActions({ tags, onDone }: { tags: string[]; onDone: () => void }) {
  const form = useForm({ tag: "", weight: "", priority: "" });
  const action = useAction();
  const tag = form.values.tag || (tags[0] ?? "");
  const apply = (body: Record<string, unknown>, what: string) =>
    action.run(async () => {
      const changed = await patch<unknown[]>(`/api/admin/channel-tags/${encodeURIComponent(tag)}`, body);
      onDone();
      return `${what}: ${changed.length} channel(s) tagged ${tag}.`;
    });
  if (tags.length === 0) return null;
  const edits: Record<string, unknown> = {};
  if (form.values.weight !== "") edits.weight = Number(form.values.weight);
  if (form.values.priority !== "") edits.priority = Number(form.values.priority);
  return (
    <FormCard
      title="Channels by tag"
      fields={[
        { field: "tag", kind: "select", label: "Tag", name: "tag", options: tags.map((t) => [t, t]) },
        { field: "weight", label: "Set weight", name: "weight", type: "number", min: 0 },
        { field: "priority", label: "Set priority", name: "priority", type: "number" },
      ]}
      submit="Apply weight and priority"
      form={{ values: { ...form.values, tag }, set: form.set }}
      action={action}
      onSubmit={() => {
        if (Object.keys(edits).length === 0) return action.setError("weight or priority: give one to set");
        void apply(edits, "Changed");
      }}
      buttons={
        <>
          <button type="button" onClick={() => void apply({ status: "enabled" }, "Enabled")} disabled={action.busy}>
            Enable all
          </button>
          <button type="button" onClick={() => void apply({ status: "disabled" }, "Disabled")} disabled={action.busy}>
            Disable all
          </button>
        </>
      }
    />
  );
}
