/** Says plainly, once per run, which store and cache tests will be skipped on this machine. */
export default function setup() {
  const missing: string[] = [];
  if (!process.env.TEST_DATABASE_URL) missing.push("PostgreSQL tests are skipped: TEST_DATABASE_URL is not set");
  if (!process.env.TEST_REDIS_URL) missing.push("Redis tests are skipped: TEST_REDIS_URL is not set");
  for (const line of missing) process.stdout.write(`\n[media-gateway tests] ${line}\n`);
}
