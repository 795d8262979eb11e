import type { Kysely } from "kysely";
import type { Database } from "./schema.js";

/** Counts tasks by family and state: one grouped query per scrape. */
export async function countTasksByState(
  db: Kysely<Database>,
): Promise<{ platform: string; status: string; count: number }[]> {
  const rows = await db
    .selectFrom("tasks")
    .select((eb) => ["platform", "status", eb.fn.countAll<number | string>().as("count")])
    .groupBy(["platform", "status"])
    .execute();
  return rows.map((r) => ({ platform: r.platform, status: r.status, count: Number(r.count) }));
}
