import type { Kysely } from "kysely";
import type { Store } from "./database.js";
import type { Database } from "./schema.js";

type AddImages = (userId: number, model: string, urls: string[], createdAt: number) => void;

/** The images each user generated and was given as a stored URL. */
export class UserImages {
  /** SQLite: the prepared insert of a request's rows, made on first use. */
  private addPrepared: AddImages | null = null;

  /**
   * @param store on SQLite, the connection and its group commit: rows are then added by a
   *   prepared statement in the next group commit, with no query compiled per request.
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly store: Pick<Store, "sqlite" | "commits"> = {},
  ) {}

  async add(userId: number, model: string, urls: string[], createdAt: number): Promise<void> {
    if (urls.length === 0) return;
    const { sqlite, commits } = this.store;
    if (sqlite && commits) {
      await commits.run(() => {
        this.addPrepared ??= (() => {
          const insert = sqlite.prepare(
            "insert into user_images (user_id, model, url, created_at) values (?, ?, ?, ?)",
          );
          // A transaction function: in the group commit it is a savepoint, so the rows of one
          // request are added together or not at all.
          return sqlite.transaction((user: number, name: string, list: string[], at: number) => {
            for (const url of list) insert.run(user, name, url, at);
          });
        })();
        this.addPrepared(userId, model, urls, createdAt);
      });
      return;
    }
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
