import type { Static, TSchema } from "@sinclair/typebox";
import {
  CreateTokenBody,
  CreateUserBody,
  SetPriceBody,
  TopUpBody,
  UpdatePriceBody,
  UpdateTokenBody,
  UpdateUserBody,
} from "../contracts/admin.js";
import { SetRateLimitBody } from "../contracts/rate-limits.js";
import { GenerateBatchBody } from "../contracts/redemptions.js";
import * as catalog from "../core/admin/catalog.js";
import type { AdminPorts, PriceKind } from "../core/admin/ports.js";
import * as limits from "../core/admin/rate-limits.js";
import * as codes from "../core/admin/redemption-codes.js";
import * as people from "../core/admin/users.js";
import { unixNow } from "../core/ids.js";
import type { LimitScope } from "../core/limits/rate-limit-rules.js";
import { CHANNEL_TYPES, CreateChannelBody, UpdateChannelBody } from "../wiring/admin-ports.js";
import { bodyOf, checkBody, type FlagSpec, idOf, UsageError } from "./flags.js";
import { priceRatesText } from "./price-rates.js";

/** What a command hands to its action: parsed flags and the positional words after the verb. */
export interface Invocation {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/**
 * One admin command. `flags` are its options (besides `--json` and `--help`); an action first
 * turns every flag into checked data and only then touches the store.
 */
export interface AdminCommand {
  usage: string;
  flags: FlagSpec;
  /** Checks everything that can be checked without the store; returns what `run` needs. */
  prepare(inv: Invocation): unknown;
  run(s: AdminPorts, prepared: never): Promise<unknown>;
}

function command<P>(spec: {
  usage: string;
  flags?: FlagSpec;
  prepare: (inv: Invocation) => P;
  run: (s: AdminPorts, prepared: P) => Promise<unknown>;
}): AdminCommand {
  return { flags: {}, ...spec } as AdminCommand;
}

const USER_CREATE_FLAGS: FlagSpec = { name: "text", group: "text", quota: "int", "credit-line": "int" };
const USER_FLAGS: FlagSpec = {
  name: "text",
  group: "text",
  status: "text",
  "webhook-url": "text?",
  "credit-line": "int",
};
const TOKEN_FLAGS: FlagSpec = {
  name: "text",
  status: "text",
  "expires-at": "int?",
  "quota-limit": "int?",
  models: "list?",
  "ip-allow": "list?",
};
const CHANNEL_FLAGS: FlagSpec = {
  name: "text",
  type: "text",
  "base-url": "text",
  key: "text",
  models: "list",
  "model-mapping": "map",
  groups: "list",
  priority: "int",
  weight: "int",
  "price-ratio": "number",
  status: "text",
  "key-rotation": "text",
  tags: "list",
};
const PRICE_FLAGS: FlagSpec = {
  unit: "text",
  price: "number",
  "input-per-million": "number",
  "output-per-million": "number",
  "cache-read-per-million": "number",
  "cache-write-5m-per-million": "number",
  "cache-write-1h-per-million": "number",
  "audio-input-per-million": "number",
  "reasoning-per-million": "number",
  "audio-output-per-million": "number",
  "cached-ratio": "number",
};

const CODE_FLAGS: FlagSpec = {
  count: "int",
  quota: "int",
  amount: "number",
  "expires-at": "int",
  prefix: "text",
  "per-user-limit": "int",
  note: "text",
};

const noPositionals = (inv: Invocation) => {
  if (inv.positionals.length > 0) throw new UsageError(`unexpected argument "${inv.positionals[0]}"`);
};

/** `<verb> ID`: exactly one id. */
function oneId(what: string) {
  return (inv: Invocation) => {
    if (inv.positionals.length > 1) throw new UsageError(`unexpected argument "${inv.positionals[1]}"`);
    return idOf(what, inv.positionals[0]);
  };
}

/** An update: the id and at least one field, checked against the PATCH schema of the API. */
function updateOf<S extends TSchema>(what: string, flags: FlagSpec, schema: S) {
  return (inv: Invocation): { id: number; body: Static<S> } => {
    const id = oneId(what)(inv);
    const body = bodyOf(flags, inv.values);
    if (Object.keys(body).length === 0) throw new UsageError("give at least one option to change");
    return { id, body: checkBody<Static<S>>(schema, body) };
  };
}

/**
 * The `update`, `disable` and `delete` verbs of users, tokens and channels: the same three
 * commands over each one's use cases. `usage` is the update's options.
 */
function editCommands<S extends TSchema>(
  what: "user" | "token" | "channel",
  spec: {
    usage: string;
    flags: FlagSpec;
    schema: S;
    deleteNote: string;
    ops: {
      update(s: AdminPorts, id: number, body: Static<S>): Promise<unknown>;
      disable(s: AdminPorts, id: number): Promise<unknown>;
      remove(s: AdminPorts, id: number): Promise<unknown>;
    };
  },
): Record<string, AdminCommand> {
  return {
    [`${what} update`]: command<{ id: number; body: Static<S> }>({
      usage: `${what} update ID ${spec.usage}`,
      flags: spec.flags,
      prepare: updateOf(what, spec.flags, spec.schema),
      run: (s, p) => spec.ops.update(s, p.id, p.body),
    }),
    [`${what} disable`]: command({
      usage: `${what} disable ID`,
      prepare: oneId(what),
      run: (s, id) => spec.ops.disable(s, id),
    }),
    [`${what} delete`]: command({
      usage: `${what} delete ID   (${spec.deleteNote})`,
      prepare: oneId(what),
      run: (s, id) => spec.ops.remove(s, id),
    }),
  };
}

function priceKey(inv: Invocation, max = 2): { kind: PriceKind; name: string } {
  const [kind, name] = inv.positionals;
  if (kind === undefined || name === undefined) throw new UsageError("give the price's KIND and NAME");
  if (!["task", "image", "content"].includes(kind)) throw new UsageError("KIND must be one of task, image, content");
  if (inv.positionals.length > max) throw new UsageError(`unexpected argument "${inv.positionals[max]}"`);
  return { kind: kind as PriceKind, name };
}

const LIMIT_FLAGS: FlagSpec = { group: "text", rpm: "int?", tpm: "int?" };

/** `limit ... SCOPE [SUBJECT] [--group GROUP]`: a rate limit's identity. */
function limitKey(inv: Invocation): { scope: LimitScope; subject: string; group: string } {
  const [scope, subject = ""] = inv.positionals;
  if (scope !== "token" && scope !== "user" && scope !== "model") {
    throw new UsageError("give the limit's scope: token, user or model");
  }
  if (inv.positionals.length > 2) throw new UsageError(`unexpected argument "${inv.positionals[2]}"`);
  const group = inv.values.group;
  return { scope, subject, group: typeof group === "string" ? group : "" };
}

function limitOf(inv: Invocation): { limit: number; afterId?: number } {
  const body = bodyOf({ limit: "int", after: "int" }, inv.values);
  const limit = (body.limit as number | undefined) ?? 100;
  if (limit < 1 || limit > 1000) throw new UsageError("--limit must be between 1 and 1000");
  return { limit, afterId: body.after as number | undefined };
}

export const COMMANDS: Record<string, AdminCommand> = {
  "user list": command({
    usage: "user list [--limit N] [--after ID]",
    flags: { limit: "int", after: "int" },
    prepare: (inv) => {
      noPositionals(inv);
      return limitOf(inv);
    },
    run: (s, p) => people.listUsers(s, p),
  }),
  "user show": command({ usage: "user show ID", prepare: oneId("user"), run: (s, id) => people.showUser(s, id) }),
  "user create": command({
    usage:
      "user create --name NAME [--group GROUP] [--quota N] [--credit-line N]   (prints the webhook signing secret once)",
    flags: USER_CREATE_FLAGS,
    prepare: (inv) => {
      noPositionals(inv);
      return checkBody<Static<typeof CreateUserBody>>(CreateUserBody, bodyOf(USER_CREATE_FLAGS, inv.values));
    },
    run: (s, body) => people.createUser(s, body),
  }),
  ...editCommands("user", {
    usage: "[--name NAME] [--group GROUP] [--status enabled|disabled] [--webhook-url URL|none] [--credit-line N]",
    flags: USER_FLAGS,
    schema: UpdateUserBody,
    deleteNote: "revokes every token of the user; the record stays",
    ops: { update: people.updateUser, disable: people.disableUser, remove: people.deleteUser },
  }),
  "user topup": command({
    usage: "user topup --user ID --amount N [--reference REF] [--note TEXT]",
    flags: { user: "text", amount: "int", reference: "text", note: "text" },
    prepare: (inv) => {
      noPositionals(inv);
      const userId = idOf("user", inv.values.user as string | undefined);
      const body = bodyOf({ amount: "int", reference: "text", note: "text" }, inv.values);
      return { userId, body: checkBody<Static<typeof TopUpBody>>(TopUpBody, body) };
    },
    run: (s, p) => people.topUpUser(s, p.userId, p.body),
  }),
  "token list": command({
    usage: "token list --user ID",
    flags: { user: "text" },
    prepare: (inv) => {
      noPositionals(inv);
      return idOf("user", inv.values.user as string | undefined);
    },
    run: (s, userId) => people.listTokens(s, userId),
  }),
  "token show": command({ usage: "token show ID", prepare: oneId("token"), run: (s, id) => people.showToken(s, id) }),
  "token create": command({
    usage:
      "token create --user ID --name NAME [--models a,b] [--quota-limit N] [--expires-at UNIX] [--ip-allow a,b]   (prints the key once)",
    flags: { user: "text", ...TOKEN_FLAGS },
    prepare: (inv) => {
      noPositionals(inv);
      const userId = idOf("user", inv.values.user as string | undefined);
      const { status: _status, ...flags } = TOKEN_FLAGS;
      if (inv.values.status !== undefined) throw new UsageError("--status is set by token update, not at creation");
      return { userId, body: checkBody<Static<typeof CreateTokenBody>>(CreateTokenBody, bodyOf(flags, inv.values)) };
    },
    run: (s, p) => people.createToken(s, p.userId, p.body),
  }),
  ...editCommands("token", {
    usage:
      "[--name NAME] [--status enabled|disabled] [--models a,b|none] [--quota-limit N|none] [--expires-at UNIX|none] [--ip-allow a,b|none]",
    flags: TOKEN_FLAGS,
    schema: UpdateTokenBody,
    deleteNote: "revokes it for good",
    ops: { update: people.updateToken, disable: people.disableToken, remove: people.deleteToken },
  }),
  "channel list": command({ usage: "channel list", prepare: noPositionals, run: (s) => catalog.listChannels(s) }),
  "channel types": command({
    usage: "channel types   (each type a channel may have: what it serves, the settings it reads)",
    prepare: noPositionals,
    run: async (s) => catalog.listChannelTypes(s),
  }),
  "channel show": command({
    usage: "channel show ID",
    prepare: oneId("channel"),
    run: (s, id) => catalog.showChannel(s, id),
  }),
  "channel create": command({
    usage: `channel create --name NAME --type ${CHANNEL_TYPES.join("|")} --base-url URL --key KEY --models a,b
                 [--groups g1,g2] [--priority N] [--weight N] [--price-ratio X] [--model-mapping a=b,c=d]
                 [--key-rotation round_robin|random] [--tags a,b]   (more keys: channel key-add)`,
    flags: CHANNEL_FLAGS,
    prepare: (inv) => {
      noPositionals(inv);
      return checkBody<Static<typeof CreateChannelBody>>(CreateChannelBody, bodyOf(CHANNEL_FLAGS, inv.values));
    },
    run: (s, body) => catalog.createChannel(s, body),
  }),
  ...editCommands("channel", {
    usage: "[any option of channel create] [--status enabled|disabled]",
    flags: CHANNEL_FLAGS,
    schema: UpdateChannelBody,
    deleteNote: "refused while unfinished tasks use it",
    ops: { update: catalog.updateChannel, disable: catalog.disableChannel, remove: catalog.deleteChannel },
  }),
  "price list": command({
    usage: "price list",
    prepare: noPositionals,
    run: async (s) => (await catalog.listPrices(s)).map((p) => ({ ...p, rates: priceRatesText(p) })),
  }),
  "price show": command({
    usage: "price show KIND NAME   (KIND: task, image or content)",
    prepare: (inv) => priceKey(inv),
    run: (s, p) => catalog.showPrice(s, p.kind, p.name),
  }),
  "price set": command({
    usage:
      "price set KIND NAME [--unit U] [--price X] [--input-per-million X] [--output-per-million X]\n" +
      "                 [--cache-read-per-million X] [--cache-write-5m-per-million X] [--cache-write-1h-per-million X]\n" +
      "                 [--audio-input-per-million X] [--reasoning-per-million X] [--audio-output-per-million X]",
    flags: PRICE_FLAGS,
    prepare: (inv) =>
      checkBody<Static<typeof SetPriceBody>>(SetPriceBody, { ...priceKey(inv), ...bodyOf(PRICE_FLAGS, inv.values) }),
    run: (s, body) => catalog.setPrice(s, body),
  }),
  "price update": command({
    usage: "price update KIND NAME [--price X] [--input-per-million X] [--output-per-million X] [--cached-ratio X]",
    flags: PRICE_FLAGS,
    prepare: (inv) => {
      const key = priceKey(inv);
      const body = bodyOf(PRICE_FLAGS, inv.values);
      if (Object.keys(body).length === 0) throw new UsageError("give at least one option to change");
      return { ...key, body: checkBody<Static<typeof UpdatePriceBody>>(UpdatePriceBody, body) };
    },
    run: (s, p) => catalog.updatePrice(s, p.kind, p.name, p.body),
  }),
  "limit list": command({ usage: "limit list", prepare: noPositionals, run: (s) => limits.listRateLimits(s) }),
  "limit set": command({
    usage:
      "limit set token|user|model [SUBJECT] [--group GROUP] [--rpm N|none] [--tpm N|none]   (SUBJECT: the token or user id, or the model; none with --group: the group's default)",
    flags: LIMIT_FLAGS,
    prepare: (inv) => {
      const key = limitKey(inv);
      const values = bodyOf(LIMIT_FLAGS, inv.values);
      return checkBody<Static<typeof SetRateLimitBody>>(SetRateLimitBody, {
        ...key,
        ...(values.rpm !== undefined ? { requestsPerMinute: values.rpm } : {}),
        ...(values.tpm !== undefined ? { tokensPerMinute: values.tpm } : {}),
      });
    },
    run: (s, body) => limits.setRateLimit(s, body),
  }),
  "limit remove": command({
    usage: "limit remove token|user|model [SUBJECT] [--group GROUP]",
    flags: { group: "text" },
    prepare: (inv) => limitKey(inv),
    run: (s, key) => limits.removeRateLimit(s, key),
  }),
  "price delete": command({
    usage: "price delete KIND NAME",
    prepare: (inv) => priceKey(inv),
    run: (s, p) => catalog.deletePrice(s, p.kind, p.name),
  }),
  "code generate": command({
    usage:
      "code generate --count N (--quota N | --amount X) [--expires-at UNIX] [--prefix P] [--per-user-limit N] [--note TEXT]   (codes are shown by code export alone)",
    flags: CODE_FLAGS,
    prepare: (inv) => {
      noPositionals(inv);
      return checkBody<Static<typeof GenerateBatchBody>>(GenerateBatchBody, bodyOf(CODE_FLAGS, inv.values));
    },
    run: (s, body) => codes.generateRedemptionBatch(s, body, unixNow()),
  }),
  "code batches": command({
    usage: "code batches [--limit N] [--after ID]   (newest first)",
    flags: { limit: "int", after: "int" },
    prepare: (inv) => {
      noPositionals(inv);
      return limitOf(inv);
    },
    run: (s, p) => codes.listRedemptionBatches(s, p),
  }),
  "code batch": command({
    usage: "code batch ID",
    prepare: oneId("redemption batch"),
    run: (s, id) => codes.showRedemptionBatch(s, id),
  }),
  "code list": command({
    usage:
      "code list BATCH [--status unused|used|disabled] [--limit N] [--after ID]   (each code by its start and end)",
    flags: { status: "text", limit: "int", after: "int" },
    prepare: (inv) => {
      const batchId = oneId("redemption batch")(inv);
      const status = inv.values.status as string | undefined;
      if (status !== undefined && !["unused", "used", "disabled"].includes(status)) {
        throw new UsageError("--status must be one of unused, used, disabled");
      }
      return { batchId, page: { ...limitOf(inv), status } };
    },
    run: (s, p) => codes.listRedemptionCodes(s, p.batchId, p.page),
  }),
  "code export": command({
    usage: "code export BATCH   (prints the batch's codes in full as CSV, once; a second export is refused)",
    prepare: oneId("redemption batch"),
    run: async (s, id) => (await codes.exportRedemptionBatch(s, id)).replace(/\r\n$/, ""),
  }),
  "code disable-batch": command({
    usage: "code disable-batch ID",
    prepare: oneId("redemption batch"),
    run: (s, id) => codes.setRedemptionBatchStatus(s, id, "disabled"),
  }),
  "code enable-batch": command({
    usage: "code enable-batch ID",
    prepare: oneId("redemption batch"),
    run: (s, id) => codes.setRedemptionBatchStatus(s, id, "enabled"),
  }),
  "code disable": command({
    usage: "code disable ID   (one code; a redeemed one is refused)",
    prepare: oneId("redemption code"),
    run: (s, id) => codes.disableRedemptionCode(s, id),
  }),
};
