import type { Kysely } from "kysely";
import type { Database } from "./schema.js";

/** The images each user generated and was given as a stored URL. */
export class UserImages {
  constructor(private readonly db: Kysely<Database>) {}

  async add(userId: number, model: string, urls: string[], createdAt: number): Promise<void> {
    if (urls.length === 0) return;
    await this.db
      .insertInto("user_images")
      .values(urls.map((url) => ({ user_id: userId, model, url, created_at: createdAt })))
      .execute();
  }

  /** A user's images, newest first; `before` pages by id. */
  list(userId: number, options: { limit: number; before?: number }) {
    let q = this.db.selectFrom("user_images").selectAll().where("user_id", "=", userId);
    if (options.before !== undefined) q = q.where("id", "<", options.before);
    return q.orderBy("id", "desc").limit(options.limit).execute();
  }
}
