import type { ConsoleAccounts } from "../../store/console-accounts.js";
import type { ConsoleReads } from "../../store/console-reads.js";
import type { ConsoleSessions } from "../../store/console-sessions.js";
import type { Settings } from "../../store/settings.js";
import type { ConsoleAuth } from "./console-auth.js";
import type { SignIn } from "./sign-in.js";

/** The console's accounts, sessions and reads, built once per gateway (src/wiring/console-services.ts). */
export interface ConsoleServices {
  auth: ConsoleAuth;
  signIn: SignIn;
  accounts: ConsoleAccounts;
  sessions: ConsoleSessions;
  reads: ConsoleReads;
  settings: Settings;
}
