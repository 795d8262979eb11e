import { readFileSync } from "node:fs";
import type { Static } from "@sinclair/typebox";
import { UpdateChannelTagBody } from "../contracts/admin.js";
import * as keys from "../core/admin/channel-keys.js";
import * as tags from "../core/admin/channel-tags.js";
import type { AdminPorts } from "../core/admin/ports.js";
import type { AdminCommand, Invocation } from "./admin-commands.js";
import { bodyOf, checkBody, type FlagSpec, idOf, UsageError } from "./flags.js";

// The key pools of channels and their tags, from the command line: the admin API's routes
// `/channels/{id}/keys` and `/channel-tags`, checked with the same schemas.

function command<P>(spec: {
  usage: string;
  flags?: FlagSpec;
  prepare: (inv: Invocation) => P;
  run: (s: AdminPorts, prepared: P) => Promise<unknown>;
}): AdminCommand {
  return { flags: {}, ...spec } as AdminCommand;
}

/** Exactly `count` positional words. */
function positionals(inv: Invocation, count: number, what: string): string[] {
  if (inv.positionals.length < count) throw new UsageError(`give ${what}`);
  if (inv.positionals.length > count) throw new UsageError(`unexpected argument "${inv.positionals[count]}"`);
  return inv.positionals;
}

function channelAndKey(inv: Invocation): { channelId: number; keyId: number } {
  const [channel, key] = positionals(inv, 2, "the channel id and the key id");
  return { channelId: idOf("channel", channel), keyId: idOf("key", key) };
}

const TAG_FLAGS: FlagSpec = {
  status: "text",
  priority: "int",
  weight: "int",
  "price-ratio": "number",
  models: "list",
  groups: "list",
  "key-rotation": "text",
};

/** Keys to add: from `--file` (one a line; `-` reads standard input), never from the command line itself. */
function keysToAdd(inv: Invocation): { channelId: number; text: string } {
  const [channel] = positionals(inv, 1, "the channel id");
  const file = inv.values.file;
  if (typeof file !== "string") throw new UsageError("--file is required (one key a line; - for standard input)");
  let text: string;
  try {
    text = readFileSync(file === "-" ? 0 : file, "utf8");
  } catch (err) {
    throw new UsageError(`--file could not be read: ${err instanceof Error ? err.message : String(err)}`);
  }
  return { channelId: idOf("channel", channel), text };
}

export const CHANNEL_POOL_COMMANDS: Record<string, AdminCommand> = {
  "channel keys": command({
    usage: "channel keys ID   (the channel's keys, masked, with their state and counters)",
    prepare: (inv) => idOf("channel", positionals(inv, 1, "the channel id")[0]),
    run: (s, id) => keys.listChannelKeys(s, id),
  }),
  "channel key-add": command({
    usage: "channel key-add ID --file FILE|-   (adds the keys of FILE, one a line; # lines skipped)",
    flags: { file: "text" },
    prepare: keysToAdd,
    run: (s, p) => keys.addChannelKeys(s, p.channelId, { text: p.text }),
  }),
  "channel key-disable": command({
    usage: "channel key-disable ID KEY_ID",
    prepare: channelAndKey,
    run: (s, p) => keys.setChannelKeyEnabled(s, p.channelId, p.keyId, false),
  }),
  "channel key-enable": command({
    usage: "channel key-enable ID KEY_ID",
    prepare: channelAndKey,
    run: (s, p) => keys.setChannelKeyEnabled(s, p.channelId, p.keyId, true),
  }),
  "channel key-remove": command({
    usage: "channel key-remove ID KEY_ID   (refused for the channel's last key)",
    prepare: channelAndKey,
    run: (s, p) => keys.removeChannelKey(s, p.channelId, p.keyId),
  }),
  "channel tags": command({
    usage: "channel tags   (every tag in use, with its number of channels)",
    prepare: (inv) => positionals(inv, 0, ""),
    run: (s) => tags.listChannelTags(s),
  }),
  "channel tag": command({
    usage:
      "channel tag TAG [--status enabled|disabled] [--priority N] [--weight N] [--price-ratio X] [--models a,b] [--groups a,b] [--key-rotation round_robin|random]   (sets them on every channel with TAG)",
    flags: TAG_FLAGS,
    prepare: (inv) => {
      const [tag] = positionals(inv, 1, "the tag");
      const body = bodyOf(TAG_FLAGS, inv.values);
      if (Object.keys(body).length === 0) throw new UsageError("give at least one option to change");
      return { tag: tag as string, body: checkBody<Static<typeof UpdateChannelTagBody>>(UpdateChannelTagBody, body) };
    },
    run: (s, p) => tags.updateChannelsByTag(s, p.tag, p.body),
  }),
};
