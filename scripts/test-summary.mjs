// Prints "N passed, N failed, N skipped" from Vitest's JSON report; exits 1 when the report is
// missing, when a test failed, or when no test ran at all.
import { readFileSync } from "node:fs";

const file = process.argv[2] ?? ".test-results/vitest.json";
let report;
try {
  report = JSON.parse(readFileSync(file, "utf8"));
} catch (err) {
  console.log(`no test report at ${file}: ${err.message}`);
  console.log("0 passed, 1 failed");
  process.exit(1);
}
const passed = report.numPassedTests ?? 0;
const failed = (report.numFailedTests ?? 0) + (report.numRuntimeErrorTestSuites ?? 0);
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
const failedSuites = (report.testResults ?? []).filter(
  (r) => r.status === "failed" && (r.assertionResults ?? []).length === 0,
);
for (const suite of failedSuites)
  console.log(`suite failed to run: ${suite.name}: ${(suite.message ?? "").split("\n")[0]}`);
if (passed + failed === 0) console.log("no test was executed");
console.log(`${passed} passed, ${failed + failedSuites.length} failed, ${skipped} skipped`);
process.exit(failed + failedSuites.length > 0 || passed === 0 ? 1 : 0);
