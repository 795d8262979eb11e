import { defineConfig } from "vitest/config";

/**
 * Checks of defects found by the reliability suite and not yet fixed. They fail today, so they are
 * kept out of the default run (`*.check.ts` is not a test file name there); run them with
 * `npx vitest run --config test/reliability/defects/vitest.config.ts`. Once a defect is fixed, its
 * check moves into the suite as an ordinary test.
 */
export default defineConfig({
  test: {
    include: ["test/reliability/defects/**/*.check.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
