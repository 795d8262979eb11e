import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { openStore, type Store } from "../../src/store/database.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import type { StoreKind } from "./gateway.js";
import { createTestDatabase } from "./postgres.js";

/** A migrated store of a test's own, and how to be rid of it. */
export interface TestStore {
  store: Store;
  /** Closes the store and removes its SQLite file or drops its PostgreSQL database. */
  close(): Promise<void>;
}

/**
 * Opens a store of `kind` that no other test sees, migrated to the latest schema: a SQLite file in
 * a temporary folder named from `prefix`, or a PostgreSQL database of its own (createTestDatabase).
 */
export async function openTestStore(kind: StoreKind, prefix = "mg-store-"): Promise<TestStore> {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  let url = `sqlite:${path.join(dir, "gateway.sqlite")}`;
  let drop: (() => Promise<void>) | null = null;
  if (kind === "postgres") {
    const db = await createTestDatabase();
    url = db.url;
    drop = db.drop;
  }
  const store = openStore(url);
  const close = async () => {
    await store.close();
    if (drop) await drop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await migrateToLatest(store);
  } catch (err) {
    await close();
    throw err;
  }
  return { store, close };
}
