import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { userView } from "../api/admin/views.js";
import { loadConfig } from "../config.js";
import { CHANNEL_TYPES, Channels, type ChannelType, publicChannel } from "../store/channels.js";
import { openStore } from "../store/database.js";
import { Ledger } from "../store/ledger.js";
import { migrateToLatest } from "../store/migrate.js";
import { Tokens } from "../store/tokens.js";
import { Users } from "../store/users.js";

const USAGE = `usage: media-gateway admin <what> <verb> [options]   (works on DATABASE_URL / DATA_DIR directly)
  user create --name NAME [--group GROUP] [--quota N] [--credit-line N]   (prints the webhook signing secret once)
  user topup --user ID --amount N [--reference REF]
  token create --user ID --name NAME [--models a,b] [--quota-limit N]
  channel create --name NAME --type ${CHANNEL_TYPES.join("|")} --base-url URL --key KEY --models a,b
                 [--priority N] [--weight N] [--groups g1,g2]
Each prints one JSON line. A token's key is printed once, at creation.`;

class UsageError extends Error {}

function need(values: Record<string, string | undefined>, name: string): string {
  const v = values[name];
  if (v === undefined || v === "") throw new UsageError(`--${name} is required`);
  return v;
}

function int(values: Record<string, string | undefined>, name: string): number | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`--${name} must be a whole number`);
  return Number(v);
}

const list = (v: string | undefined) =>
  v === undefined
    ? undefined
    : v
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);

/** Runs one bootstrap step against the configured store, without HTTP. */
export async function runAdminCommand(args: string[]): Promise<void> {
  const [what, verb, ...rest] = args;
  if (!what || what === "--help" || what === "help") {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const { values } = parseArgs({
    args: rest,
    options: Object.fromEntries(
      [
        "name",
        "group",
        "quota",
        "credit-line",
        "user",
        "amount",
        "reference",
        "models",
        "quota-limit",
        "type",
        "base-url",
        "key",
        "priority",
        "weight",
        "groups",
      ].map((o) => [o, { type: "string" as const }]),
    ),
  }) as { values: Record<string, string | undefined> };

  const store = openStore(loadConfig().databaseUrl);
  try {
    await migrateToLatest(store);
    const users = new Users(store.db);
    const out = (v: unknown) => process.stdout.write(`${JSON.stringify(v)}\n`);
    const command = `${what} ${verb ?? ""}`;
    if (command === "user create") {
      const user = await users.create({
        name: need(values, "name"),
        group: values.group,
        creditLine: int(values, "credit-line"),
      });
      const quota = int(values, "quota");
      if (quota)
        await Ledger.forStore(store).topUp(Number(user.id), quota, `topup:user-${user.id}:initial`, "initial quota");
      // The webhook signing secret is printed once, here.
      out({ ...userView((await users.get(Number(user.id))) ?? user), webhook_secret: user.webhook_secret });
    } else if (command === "user topup") {
      const userId = int(values, "user") ?? Number(need(values, "user"));
      const amount = int(values, "amount") ?? Number(need(values, "amount"));
      if (!(await users.get(userId))) throw new UsageError(`no user ${userId}`);
      const reference = values.reference ?? `topup:${randomUUID()}`;
      const outcome = await Ledger.forStore(store).topUp(userId, amount, reference, "cli top-up");
      out({ applied: outcome.applied, reference, quota: Number((await users.get(userId))?.quota) });
    } else if (command === "token create") {
      const userId = int(values, "user") ?? Number(need(values, "user"));
      if (!(await users.get(userId))) throw new UsageError(`no user ${userId}`);
      const { row, key } = await new Tokens(store.db).create({
        userId,
        name: need(values, "name"),
        models: list(values.models) ?? null,
        quotaLimit: int(values, "quota-limit") ?? null,
      });
      out({ id: Number(row.id), user_id: userId, name: row.name, key });
    } else if (command === "channel create") {
      const type = need(values, "type");
      if (!CHANNEL_TYPES.includes(type as ChannelType))
        throw new UsageError(`--type must be one of ${CHANNEL_TYPES.join(", ")}`);
      const baseUrl = need(values, "base-url");
      if (!/^https?:\/\//.test(baseUrl)) throw new UsageError("--base-url must be an http(s) URL");
      const channel = await new Channels(store.db).create({
        name: need(values, "name"),
        type: type as ChannelType,
        baseUrl,
        key: need(values, "key"),
        models: list(need(values, "models")) ?? [],
        groups: list(values.groups),
        priority: int(values, "priority"),
        weight: int(values, "weight"),
      });
      out(publicChannel(channel));
    } else {
      throw new UsageError(`unknown admin command "${command.trim()}"`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n${USAGE}\n`);
      process.exitCode = 2;
      return;
    }
    throw err;
  } finally {
    await store.close();
  }
}
