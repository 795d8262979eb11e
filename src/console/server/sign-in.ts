import { decoyHash, verifyPassword } from "../../auth/passwords.js";
import { GatewayError } from "../../core/errors.js";
import type { ConsoleAccounts } from "../../store/console-accounts.js";
import type { ConsoleRole } from "./console-auth.js";
import type { LoginLimits } from "./login-limits.js";

export interface SignedInAccount {
  role: ConsoleRole;
  id: number;
  name: string;
  email: string | null;
}

interface Candidate extends SignedInAccount {
  hash: string;
  enabled: boolean;
}

/**
 * Checks a sign-in: the name is an operator's name, else a user's email or (unambiguous) name.
 * Exactly one password check is made whatever the name, against a decoy hash when it names no
 * account, so a wrong name and a wrong password look and take alike.
 */
export class SignIn {
  private readonly decoy: () => Promise<string>;

  constructor(
    private readonly accounts: ConsoleAccounts,
    private readonly limits: LoginLimits,
    passwordCost: number,
  ) {
    this.decoy = decoyHash(passwordCost);
  }

  private async candidate(login: string): Promise<Candidate | null> {
    const op = await this.accounts.operatorByName(login);
    if (op) {
      const id = Number(op.id);
      return {
        role: "operator",
        id,
        name: op.name,
        email: null,
        hash: op.password_hash,
        enabled: op.status === "enabled",
      };
    }
    const users = await this.accounts.usersByLogin(login);
    const user = users.length === 1 ? users[0] : undefined;
    if (!user || user.password_hash === null) return null;
    return {
      role: "user",
      id: Number(user.id),
      name: user.name,
      email: user.email ?? null,
      hash: user.password_hash,
      enabled: user.status === "enabled",
    };
  }

  /** The account a login and password sign in to; 401 invalid_credentials, or 429 when slowed. */
  async check(login: string, password: string, address: string): Promise<SignedInAccount> {
    await this.limits.assertAllowed(login, address);
    const found = await this.candidate(login);
    const matches = await verifyPassword(password, found?.hash ?? (await this.decoy()));
    if (!found || !matches || !found.enabled) {
      await this.limits.recordFailure(login, address);
      throw new GatewayError("GW_ERR_INVALID_CREDENTIALS");
    }
    await this.limits.clearAccount(login);
    return { role: found.role, id: found.id, name: found.name, email: found.email };
  }
}
