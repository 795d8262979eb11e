import type { Kysely, Selectable } from "kysely";
import { unixNow } from "../core/ids.js";
import type { Database, OperatorsTable } from "./schema.js";
import type { UserRow } from "./users.js";

export type OperatorRow = Selectable<OperatorsTable>;

/** Console operator accounts and the sign-in fields of users. */
export class ConsoleAccounts {
  constructor(private readonly db: Kysely<Database>) {}

  /** A new operator; undefined when the name is taken. */
  async createOperator(name: string, passwordHash: string): Promise<OperatorRow | undefined> {
    const now = unixNow();
    return this.db
      .insertInto("operators")
      .values({ name, password_hash: passwordHash, status: "enabled", created_at: now, updated_at: now })
      .onConflict((oc) => oc.column("name").doNothing())
      .returningAll()
      .executeTakeFirst();
  }

  operatorByName(name: string): Promise<OperatorRow | undefined> {
    return this.db.selectFrom("operators").selectAll().where("name", "=", name).executeTakeFirst();
  }

  operator(id: number): Promise<OperatorRow | undefined> {
    return this.db.selectFrom("operators").selectAll().where("id", "=", id).executeTakeFirst();
  }

  listOperators(): Promise<OperatorRow[]> {
    return this.db.selectFrom("operators").selectAll().orderBy("id").execute();
  }

  setOperatorStatus(name: string, status: "enabled" | "disabled"): Promise<OperatorRow | undefined> {
    return this.db
      .updateTable("operators")
      .set({ status, updated_at: unixNow() })
      .where("name", "=", name)
      .returningAll()
      .executeTakeFirst();
  }

  /**
   * The users a sign-in name may mean: the one with this email (lower-cased), else those with this
   * name that have a password (user names are not unique; the caller refuses more than one).
   */
  async usersByLogin(login: string): Promise<UserRow[]> {
    if (login.includes("@")) {
      const byEmail = await this.db.selectFrom("users").selectAll().where("email", "=", login.toLowerCase()).execute();
      if (byEmail.length > 0) return byEmail;
    }
    return this.db
      .selectFrom("users")
      .selectAll()
      .where("name", "=", login)
      .where("password_hash", "is not", null)
      .limit(2)
      .execute();
  }

  /** Whether a user other than `exceptId` has this name or this email. */
  async userNameOrEmailTaken(name: string, email: string | null): Promise<"name" | "email" | null> {
    const byName = await this.db.selectFrom("users").select("id").where("name", "=", name).executeTakeFirst();
    if (byName) return "name";
    if (email === null) return null;
    const byEmail = await this.db
      .selectFrom("users")
      .select("id")
      .where("email", "=", email.toLowerCase())
      .executeTakeFirst();
    return byEmail ? "email" : null;
  }

  async setUserPassword(userId: number, passwordHash: string): Promise<void> {
    await this.db
      .updateTable("users")
      .set({ password_hash: passwordHash, updated_at: unixNow() })
      .where("id", "=", userId)
      .execute();
  }

  /** Revokes a user's tokens of this name that have expired (earlier playground tokens); how many. */
  async revokeExpiredTokens(userId: number, name: string, now: number): Promise<number> {
    const rows = await this.db
      .updateTable("tokens")
      .set({ status: "revoked", updated_at: now })
      .where("user_id", "=", userId)
      .where("name", "=", name)
      .where("status", "=", "enabled")
      .where("expires_at", "<=", now)
      .returning("id")
      .execute();
    return rows.length;
  }

  /** Sets a user's email (lower-cased); false when another user has it. */
  async setUserEmail(userId: number, email: string | null): Promise<boolean> {
    try {
      await this.db
        .updateTable("users")
        .set({ email: email === null ? null : email.toLowerCase(), updated_at: unixNow() })
        .where("id", "=", userId)
        .execute();
      return true;
    } catch (err) {
      if (/unique|duplicate/i.test(String((err as Error).message))) return false;
      throw err;
    }
  }
}
