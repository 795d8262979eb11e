import { keysFromText } from "../key-pool.js";
import { found, refused } from "./checks.js";
import type { AdminPorts } from "./ports.js";
import type { AddChannelKeysInput, AddedChannelKeysView, ChannelKeyView } from "./shapes.js";
import { channelKeyView } from "./views.js";

/** The key pools of channels as operators manage them: listed masked, added in bulk, disabled, removed. */

/** The reason a channel is disabled with when none of its keys is live (routing sets it, the key prober lifts it). */
const NO_LIVE_KEY_PREFIX = "no live key";

/** Most keys one request adds (the contract says the same). */
const MAX_KEYS = 10_000;

export async function listChannelKeys(s: AdminPorts, channelId: number): Promise<ChannelKeyView[]> {
  found(await s.channels.get(channelId), "channel", channelId);
  return (await s.channels.keys.listFor(channelId)).map(channelKeyView);
}

/**
 * Adds keys to a channel's pool, from a list or a text of one key a line; keys the pool holds
 * already are counted, not added twice. A channel that was down for want of a live key is
 * enabled again.
 */
export async function addChannelKeys(
  s: AdminPorts,
  channelId: number,
  body: AddChannelKeysInput,
): Promise<AddedChannelKeysView> {
  const channel = found(await s.channels.get(channelId), "channel", channelId);
  const keys = [...(body.keys ?? []).map((k) => k.trim()), ...keysFromText(body.text ?? "")];
  if (keys.some((k) => k === "")) throw refused("keys", "holds an empty key");
  if (keys.length === 0) throw refused(body.text !== undefined ? "text" : "keys", "holds no key");
  if (keys.length > MAX_KEYS) throw refused("keys", `holds ${keys.length} keys; at most ${MAX_KEYS} at once`);
  const outcome = await s.channels.keys.add(channelId, keys);
  if (
    outcome.added.length > 0 &&
    channel.status === "auto_disabled" &&
    channel.statusReason.startsWith(NO_LIVE_KEY_PREFIX)
  ) {
    await s.channels.update(channelId, { status: "enabled", statusReason: "" });
  }
  await s.announce("channels");
  return { added: outcome.added.map(channelKeyView), duplicates: outcome.duplicates };
}

/** Enables or disables one key of a channel. */
export async function setChannelKeyEnabled(
  s: AdminPorts,
  channelId: number,
  keyId: number,
  enabled: boolean,
): Promise<ChannelKeyView> {
  found(await s.channels.get(channelId), "channel", channelId);
  const key = found(await s.channels.keys.setEnabled(channelId, keyId, enabled), `key of channel ${channelId}:`, keyId);
  await s.announce("channels");
  return channelKeyView(key);
}

/** Removes one key; a channel keeps at least one (delete or disable the channel instead). */
export async function removeChannelKey(
  s: AdminPorts,
  channelId: number,
  keyId: number,
): Promise<{ id: number; deleted: true }> {
  found(await s.channels.get(channelId), "channel", channelId);
  const pool = await s.channels.keys.listFor(channelId);
  found(
    pool.find((k) => k.id === keyId),
    `key of channel ${channelId}:`,
    keyId,
  );
  if (pool.length === 1) {
    throw refused("id", "is the channel's last key; add another first, or disable or delete the channel");
  }
  await s.channels.keys.remove(channelId, keyId);
  await s.announce("channels");
  return { id: keyId, deleted: true };
}
