import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most tests wait on sockets and timers, not the CPU: three files at a time halve the run on
    // two cores (Vitest's default there is one). TEST_WORKERS overrides it.
    maxWorkers: Number(process.env.TEST_WORKERS ?? 3),
    reporters: process.env.VITEST_JSON_REPORT
      ? ["default", ["json", { outputFile: process.env.VITEST_JSON_REPORT }]]
      : ["default"],
  },
});
