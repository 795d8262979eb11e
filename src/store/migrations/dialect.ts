import { type CreateTableBuilder, type Kysely, PostgresAdapter } from "kysely";

// Helpers shared by migrations: one migration set serves SQLite and PostgreSQL.

export type AnyDb = Kysely<any>;

export function isPostgres(db: AnyDb): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** An auto-incrementing 64-bit primary key named `id`. */
export function withId<T extends string>(db: AnyDb, table: CreateTableBuilder<T, never>) {
  return isPostgres(db)
    ? table.addColumn("id", "bigserial", (c) => c.primaryKey())
    : table.addColumn("id", "integer", (c) => c.primaryKey().autoIncrement());
}
