// Operators: channels with their health; create, edit (the key is write-only), test, enable or
// disable, priority and weight, tags; each channel's key pool and the changes by tag.
import { Type } from "@sinclair/typebox";
import { useState } from "preact/hooks";
import { type ChannelView, CreateChannelBody } from "../../../contracts/admin.js";
import type { ChannelTypeView } from "../../../contracts/channel-types.js";
import { get, patch, post } from "../api.js";
import { FormCard, useForm } from "../forms.js";
import { check, fmtPercent, fmtTime, Notice, Page, Table, useAction, useLoad } from "../ui.js";
import { ChannelKeys, TagActions } from "./channel-keys.js";

export type Channel = ChannelView;

/** A channel type as the admin API lists it (GET /api/admin/channel-types): the gateway's own list. */
export type ChannelType = ChannelTypeView;

/** The form's rule: a new channel's body, its key checked apart (an edit may leave it empty). */
const ChannelForm = Type.Omit(CreateChannelBody, ["key"]);

const list = (s: string) =>
  s
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);

export function ChannelsPage() {
  const channels = useLoad(() => get<Channel[]>("/api/admin/channels"), []);
  const types = useLoad(() => get<ChannelType[]>("/api/admin/channel-types"), []);
  const [editing, setEditing] = useState<Channel | null>(null);
  const [pool, setPool] = useState<Channel | null>(null);
  const tags = [...new Set((channels.data ?? []).flatMap((c) => c.tags))].sort();
  const action = useAction();
  const toggle = (c: Channel) =>
    action.run(async () => {
      await patch(`/api/admin/channels/${c.id}`, { status: c.status === "enabled" ? "disabled" : "enabled" });
      channels.reload();
      return `${c.name} ${c.status === "enabled" ? "disabled" : "enabled"}.`;
    });
  const test = (c: Channel) =>
    action.run(async () => {
      const r = await post<{ ok: boolean; latency_ms: number; error: string | null }>(
        `/api/admin/channels/${c.id}/test`,
      );
      channels.reload();
      if (!r.ok)
        throw new Error(`${c.name}: the test failed after ${r.latency_ms} ms: ${r.error ?? "no reason given"}`);
      return `${c.name}: the test passed in ${r.latency_ms} ms.`;
    });
  return (
    <Page title="Channels">
      <Notice error={channels.error ?? types.error ?? action.error} ok={action.ok} />
      <Table
        caption="Channels and their health"
        rows={channels.data}
        columns={[
          { title: "Name", cell: (c) => c.name },
          { title: "Type", cell: (c) => c.type },
          {
            title: "Status",
            cell: (c) => (
              <span class={`badge ${c.status}`} title={c.status_reason}>
                {c.status}
              </span>
            ),
          },
          { title: "Success", numeric: true, cell: (c) => fmtPercent(c.recent_success_rate) },
          { title: "p50", numeric: true, cell: (c) => (c.latency_ms_p50 == null ? "—" : `${c.latency_ms_p50} ms`) },
          { title: "Tags", cell: (c) => c.tags.join(", ") || "—" },
          { title: "Priority", numeric: true, cell: (c) => c.priority },
          { title: "Weight", numeric: true, cell: (c) => c.weight },
          {
            title: "Last error",
            cell: (c) => (c.last_error ? `${c.last_error} (${fmtTime(c.last_error_at)})` : c.status_reason || "—"),
          },
          {
            title: "Actions",
            cell: (c) => (
              <span class="row-actions">
                <button type="button" aria-label={`Test ${c.name}`} onClick={() => test(c)} disabled={action.busy}>
                  Test
                </button>
                <button type="button" aria-label={`Edit ${c.name}`} onClick={() => setEditing(c)}>
                  Edit
                </button>
                <button type="button" aria-label={`Keys of ${c.name}`} onClick={() => setPool(c)}>
                  Keys
                </button>
                <button
                  type="button"
                  aria-label={`${c.status === "enabled" ? "Disable" : "Enable"} ${c.name}`}
                  onClick={() => toggle(c)}
                  disabled={action.busy}
                >
                  {c.status === "enabled" ? "Disable" : "Enable"}
                </button>
              </span>
            ),
          },
        ]}
      />
      <ChannelEditor
        key={editing?.id ?? "new"}
        channel={editing}
        types={types.data ?? []}
        onDone={() => {
          setEditing(null);
          channels.reload();
        }}
      />
      {/* Below the editor: what grows as it loads moves nothing under it. */}
      <TagActions tags={tags} onDone={() => channels.reload()} />
      {pool ? <ChannelKeys key={pool.id} channel={pool} onClose={() => setPool(null)} /> : null}
    </Page>
  );
}

/** What a type serves and the settings it reads, in one line under the type's field. */
function typeHint(type: ChannelType | undefined): string {
  if (!type) return "";
  const serves = type.capabilities.join(", ") || "nothing";
  const platforms = type.task_platforms.length > 0 ? ` (${type.task_platforms.join(", ")})` : "";
  return `${type.description}. Serves ${serves}${platforms}. Settings: ${type.settings.map((s) => s.name).join(", ")}.`;
}

function ChannelEditor({
  channel,
  types,
  onDone,
}: {
  channel: Channel | null;
  types: ChannelType[];
  onDone: () => void;
}) {
  const form = useForm({
    name: channel?.name ?? "",
    // Empty until chosen: the first type the gateway lists.
    type: channel?.type ?? "",
    base_url: channel?.base_url ?? "",
    key: "",
    models: channel?.models.join(", ") ?? "",
    groups: channel?.groups.join(", ") ?? "default",
    priority: String(channel?.priority ?? 0),
    weight: String(channel?.weight ?? 1),
    tags: channel?.tags.join(", ") ?? "",
    key_rotation: channel?.key_rotation ?? "round_robin",
  });
  const action = useAction();
  const v = form.values;
  const type = v.type || (types[0]?.type ?? "");
  const options: Array<[string, string]> = types.map((t) => [t.type, `${t.type} (${t.capabilities.join(", ")})`]);
  // A stored type the gateway no longer lists stays shown, so that an edit does not change it unseen.
  if (type !== "" && !types.some((t) => t.type === type)) options.push([type, type]);
  const submit = () => {
    const body: Record<string, unknown> = {
      name: v.name.trim(),
      type,
      base_url: v.base_url.trim(),
      models: list(v.models),
      groups: list(v.groups),
      priority: Number(v.priority),
      weight: Number(v.weight),
      tags: list(v.tags),
      key_rotation: v.key_rotation,
    };
    const problem = check(ChannelForm, body);
    if (problem) return action.setError(problem);
    if (v.key !== "") body.key = v.key;
    else if (!channel) return action.setError("key: the upstream key is needed for a new channel");
    void action.run(async () => {
      if (channel) await patch(`/api/admin/channels/${channel.id}`, body);
      else await post("/api/admin/channels", body);
      onDone();
    });
  };
  return (
    <FormCard
      title={channel ? `Edit ${channel.name}` : "Create a channel"}
      fields={[
        { field: "name", label: "Name", name: "name", required: true },
        { field: "type", kind: "select", label: "Type", name: "type", options },
        { field: "base_url", label: "Base URL", name: "base_url", type: "url", required: true },
        {
          field: "key",
          label: channel ? "New key (left empty: unchanged)" : "Key",
          name: "key",
          type: "password",
          autoComplete: "off",
          hint: channel
            ? "Write-only. A new key here replaces the whole pool; add keys with Keys instead."
            : "Write-only: the key is never shown again. More keys: Keys, once created.",
        },
        { field: "models", label: "Models (comma-separated)", name: "models", required: true },
        { field: "groups", label: "Groups (comma-separated)", name: "groups" },
        { field: "priority", label: "Priority", name: "priority", type: "number" },
        { field: "weight", label: "Weight", name: "weight", type: "number", min: 0 },
        { field: "tags", label: "Tags (comma-separated)", name: "tags" },
        {
          field: "key_rotation",
          kind: "select",
          label: "Key rotation",
          name: "key_rotation",
          options: [
            ["round_robin", "round robin"],
            ["random", "random"],
          ],
        },
      ]}
      submit={channel ? "Save channel" : "Create channel"}
      form={{ values: { ...v, type }, set: form.set }}
      action={action}
      onSubmit={submit}
      buttons={
        channel ? (
          <button type="button" onClick={onDone}>
            Cancel
          </button>
        ) : null
      }
    >
      {/* Last in the form: its length changes with the type, and nothing below it moves. */}
      <p class="field wide">
        <small>{typeHint(types.find((t) => t.type === type))}</small>
      </p>
    </FormCard>
  );
}
