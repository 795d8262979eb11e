import type { Config } from "../config/load.js";
import type { AdminPorts } from "../core/admin/ports.js";
import type { ChangeTopic } from "../events/change-bus.js";
import { Channels } from "../store/channels.js";
import { ConsoleAccounts } from "../store/console-accounts.js";
import { ConsoleSessions } from "../store/console-sessions.js";
import { openStore } from "../store/database.js";
import { Ledger } from "../store/ledger.js";
import { migrateToLatest } from "../store/migrate.js";
import { PriceBook } from "../store/prices.js";
import { RateLimitRules } from "../store/rate-limits.js";
import { RedemptionCodes } from "../store/redemptions.js";
import { Settings } from "../store/settings.js";
import { Tokens } from "../store/tokens.js";
import { Users } from "../store/users.js";
import { vendors } from "../upstreams/registry.js";
import { adminPorts } from "./admin-ports.js";

/**
 * What one command of the command line works on: the configured store, migrated, seen through
 * the same classes a gateway uses, and closed when the command is done.
 */
export interface CommandStore {
  /** The ports of the operator's use cases; `announce` collects what changed into `changed`. */
  admin(config: Config, changed: Set<ChangeTopic>): AdminPorts;
  /** The settings table (the admin key's hash). */
  settings: Settings;
  /** Console operator accounts and their sessions. */
  operators: { accounts: ConsoleAccounts; sessions: ConsoleSessions };
  /** Brings the schema up to date; before anything else. */
  migrate(): Promise<void>;
  close(): Promise<void>;
}

/** Opens the configured store (not yet migrated: `migrate` first). */
export function openCommandStore(config: Pick<Config, "databaseUrl">): CommandStore {
  const store = openStore(config.databaseUrl);
  return {
    migrate: async () => {
      await migrateToLatest(store);
    },
    admin: (config, changed) => {
      const ledger = Ledger.forStore(store);
      return adminPorts({
        users: new Users(store.db),
        tokens: new Tokens(store.db),
        channels: new Channels(store.db),
        prices: new PriceBook(store.db),
        ledger,
        redemptions: new RedemptionCodes(store.db, ledger),
        rateLimitRules: new RateLimitRules(store.db),
        vendors,
        config,
        // Told to running gateways through Redis after the command, when Redis is configured.
        announce: async (topic) => {
          changed.add(topic);
        },
      });
    },
    settings: new Settings(store.db),
    operators: { accounts: new ConsoleAccounts(store.db), sessions: new ConsoleSessions(store.db) },
    close: () => store.close(),
  };
}
