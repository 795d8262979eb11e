// Prints one line, "N passed, N failed, N skipped", summed over one or more Vitest JSON reports
// (CI runs the suite once per Node version). Exits 1 when a report is missing, when a test or a
// test file failed, or when a report holds no executed test at all.
import { readFileSync } from "node:fs";

const files = process.argv.slice(2);
if (files.length === 0) files.push(".test-results/vitest.json");

let passed = 0;
let failed = 0;
let skipped = 0;
let broken = false;
for (const file of files) {
  let report;
  try {
    report = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    console.log(`no test report at ${file}: ${err.message}`);
    failed += 1;
    broken = true;
    continue;
  }
  const filePassed = report.numPassedTests ?? 0;
  const fileFailed = (report.numFailedTests ?? 0) + (report.numRuntimeErrorTestSuites ?? 0);
  // A test file that failed before any of its tests ran (an import error, a crashed worker).
  const failedSuites = (report.testResults ?? []).filter(
    (r) => r.status === "failed" && (r.assertionResults ?? []).length === 0,
  );
  for (const suite of failedSuites)
    console.log(`${file}: suite failed to run: ${suite.name}: ${(suite.message ?? "").split("\n")[0]}`);
  if (filePassed + fileFailed === 0) {
    console.log(`${file}: no test was executed`);
    broken = true;
  }
  passed += filePassed;
  failed += fileFailed + failedSuites.length;
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || broken || passed === 0 ? 1 : 0);
