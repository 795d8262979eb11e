import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: process.env.VITEST_JSON_REPORT
      ? ["default", ["json", { outputFile: process.env.VITEST_JSON_REPORT }]]
      : ["default"],
  },
});
