import type { Kysely, Selectable } from "kysely";
import type { ConsoleInvitesTable, ConsoleSessionsTable, Database } from "./schema.js";

export type SessionRow = Selectable<ConsoleSessionsTable>;
export type InviteRow = Selectable<ConsoleInvitesTable>;

/** Console sessions and invites; ids and tokens arrive here already hashed. */
export class ConsoleSessions {
  constructor(private readonly db: Kysely<Database>) {}

  async create(row: SessionRow): Promise<void> {
    await this.db.insertInto("console_sessions").values(row).execute();
  }

  get(idHash: string): Promise<SessionRow | undefined> {
    return this.db.selectFrom("console_sessions").selectAll().where("id_hash", "=", idHash).executeTakeFirst();
  }

  async touch(idHash: string, now: number): Promise<void> {
    await this.db.updateTable("console_sessions").set({ last_seen_at: now }).where("id_hash", "=", idHash).execute();
  }

  async delete(idHash: string): Promise<void> {
    await this.db.deleteFrom("console_sessions").where("id_hash", "=", idHash).execute();
  }

  /** Ends every session of an account (disabled operator, password set again). */
  async deleteAllOf(role: string, subjectId: number): Promise<void> {
    await this.db.deleteFrom("console_sessions").where("role", "=", role).where("subject_id", "=", subjectId).execute();
  }

  /** Drops sessions past their absolute end or idle since before `idleBefore`. */
  async deleteExpired(now: number, idleBefore: number): Promise<void> {
    await this.db
      .deleteFrom("console_sessions")
      .where((eb) => eb.or([eb("expires_at", "<=", now), eb("last_seen_at", "<", idleBefore)]))
      .execute();
  }

  async createInvite(row: Omit<InviteRow, "used_at">): Promise<void> {
    await this.db
      .insertInto("console_invites")
      .values({ ...row, used_at: null })
      .execute();
  }

  /** An invite still usable at `now`, or undefined. */
  openInvite(tokenHash: string, now: number): Promise<InviteRow | undefined> {
    return this.db
      .selectFrom("console_invites")
      .selectAll()
      .where("token_hash", "=", tokenHash)
      .where("used_at", "is", null)
      .where("expires_at", ">", now)
      .executeTakeFirst();
  }

  /** Marks an invite used; true only for the one call that used it. */
  async useInvite(tokenHash: string, now: number): Promise<boolean> {
    const res = await this.db
      .updateTable("console_invites")
      .set({ used_at: now })
      .where("token_hash", "=", tokenHash)
      .where("used_at", "is", null)
      .where("expires_at", ">", now)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }
}
