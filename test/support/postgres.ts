import pg from "pg";

/**
 * PostgreSQL for tests: TEST_DATABASE_URL points at a server (CI sets it). Each call makes a
 * database of its own and drops it afterwards, so runs never see each other's rows.
 */
export const PG_URL = process.env.TEST_DATABASE_URL ?? "";
export const HAS_PG = PG_URL !== "";

export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  if (!HAS_PG) throw new Error("TEST_DATABASE_URL is not set");
  const name = `mg_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await admin.query(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      try {
        await c.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}
