import { spawnSync } from "node:child_process";
import path from "node:path";

/**
 * Compiles the gateway when dist/ is older than the sources (the tests that start the command
 * line run the compiled JavaScript, as the image does), and says plainly, once per run, which
 * store and cache tests will be skipped on this machine.
 */
export default function setup() {
  const build = spawnSync(process.execPath, [path.resolve(import.meta.dirname, "../../scripts/build-if-stale.mjs")], {
    stdio: "inherit",
  });
  if (build.status !== 0) throw new Error("the build of dist/ failed: see the compiler's output above");
  const missing: string[] = [];
  if (!process.env.TEST_DATABASE_URL) missing.push("PostgreSQL tests are skipped: TEST_DATABASE_URL is not set");
  if (!process.env.TEST_REDIS_URL) missing.push("Redis tests are skipped: TEST_REDIS_URL is not set");
  for (const line of missing) process.stdout.write(`\n[media-gateway tests] ${line}\n`);
}
