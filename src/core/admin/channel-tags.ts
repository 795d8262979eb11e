import { notFound } from "./checks.js";
import type { AdminPorts } from "./ports.js";
import type { ChannelTagPatch, ChannelTagView, ChannelView } from "./shapes.js";
import { channelView } from "./views.js";

/** Channel tags: every tag in use, and one change applied to every channel carrying a tag. */

export async function listChannelTags(s: AdminPorts): Promise<ChannelTagView[]> {
  const counts = new Map<string, number>();
  for (const c of await s.channels.list()) for (const tag of c.tags) counts.set(tag, (counts.get(tag) ?? 0) + 1);
  return [...counts.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([tag, channels]) => ({ tag, channels }));
}

/**
 * Sets the fields sent on every channel carrying `tag` (enable, disable, weight, priority,
 * models, ...); a 404 when no channel carries it. Returns the channels as changed.
 */
export async function updateChannelsByTag(s: AdminPorts, tag: string, patch: ChannelTagPatch): Promise<ChannelView[]> {
  const tagged = (await s.channels.list()).filter((c) => c.tags.includes(tag));
  if (tagged.length === 0) throw notFound("channel tagged", tag);
  const changed: ChannelView[] = [];
  for (const channel of tagged) {
    const updated = await s.channels.update(channel.id, {
      status: patch.status,
      statusReason: patch.status === "disabled" ? `disabled by operator (tag ${tag})` : undefined,
      priority: patch.priority,
      weight: patch.weight,
      priceRatio: patch.price_ratio,
      models: patch.models,
      groups: patch.groups,
      keyRotation: patch.key_rotation,
    });
    if (updated) changed.push(channelView(updated));
  }
  await s.announce("channels");
  return changed;
}
