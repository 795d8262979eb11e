import { Migrator } from "kysely";
import type { Store } from "./database.js";
import { MIGRATIONS } from "./migrations/index.js";

/** Applies every pending migration; throws with the failing migration's name. */
export async function migrateToLatest(store: Store): Promise<string[]> {
  const migrator = new Migrator({ db: store.db, provider: { getMigrations: async () => MIGRATIONS } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error");
    throw new Error(`migration ${failed?.migrationName ?? "(unknown)"} failed: ${String(error)}`, { cause: error });
  }
  return (results ?? []).map((r) => r.migrationName);
}
