/** Redis for tests: TEST_REDIS_URL points at a server (CI sets it). Keys get a per-run prefix. */
export const REDIS_URL = process.env.TEST_REDIS_URL ?? "";
export const HAS_REDIS = REDIS_URL !== "";

export function uniqueRedisPrefix(): string {
  return `mg-test-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
}
