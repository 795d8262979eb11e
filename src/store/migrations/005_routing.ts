import type { AnyDb } from "./dialect.js";

// Reserved for the surface named in the file name; empty until that surface needs columns.
export async function up(_db: AnyDb): Promise<void> {}

export async function down(_db: AnyDb): Promise<void> {}
