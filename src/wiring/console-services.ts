import type { Redis } from "ioredis";
import type { Config } from "../config/load.js";
import { ConsoleAuth } from "../console/server/console-auth.js";
import type { ConsoleServices } from "../console/server/console-services.js";
import { LoginLimits } from "../console/server/login-limits.js";
import { SignIn } from "../console/server/sign-in.js";
import { ConsoleAccounts } from "../store/console-accounts.js";
import { ConsoleReads } from "../store/console-reads.js";
import { ConsoleSessions } from "../store/console-sessions.js";
import type { Store } from "../store/database.js";
import { Settings } from "../store/settings.js";
import type { Users } from "../store/users.js";

/** The console's accounts, sessions and reads over the store, built once per gateway. */
export function buildConsoleServices(parts: {
  config: Pick<Config, "console" | "publicBaseUrl" | "redisKeyPrefix">;
  store: Store;
  users: Users;
  redis: Redis | null;
}): ConsoleServices {
  const { config, store } = parts;
  const accounts = new ConsoleAccounts(store.db);
  const sessions = new ConsoleSessions(store.db);
  const settings = new Settings(store.db);
  const limits = new LoginLimits(
    {
      perAccount: config.console.loginFailuresPerAccount,
      perAddress: config.console.loginFailuresPerAddress,
      keyPrefix: config.redisKeyPrefix,
    },
    parts.redis,
  );
  return {
    auth: new ConsoleAuth({ config, sessions, accounts, users: parts.users, settings }),
    signIn: new SignIn(accounts, limits, config.console.passwordCost),
    accounts,
    sessions,
    reads: new ConsoleReads(store.db),
    settings,
  };
}
