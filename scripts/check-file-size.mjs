// Source files past 350 lines are named as a question for review (one concept per file?); past 500
// lines the check fails. A split made only to pass the count is worse than a long file, so the
// warning asks, and only the hard bound stops a change.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

const WARN = 350;
const FAIL = 500;
const root = new URL("../", import.meta.url).pathname;
const folders = ["src", "bench", "scripts", "test"];
const warned = [];
const failed = [];

function walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules") walk(path);
    } else if (/\.(ts|tsx|js|mjs)$/.test(entry.name)) {
      const lines = readFileSync(path, "utf8").split("\n").length;
      const name = `${relative(root, path)} (${lines} lines)`;
      if (lines > FAIL) failed.push(name);
      else if (lines > WARN) warned.push(name);
    }
  }
}

for (const folder of folders) walk(join(root, folder));
if (warned.length > 0) {
  console.log(`over ${WARN} lines, is each still one concept? ${warned.join(", ")}`);
}
if (failed.length > 0) {
  console.error(`over ${FAIL} lines (split by concern): ${failed.join(", ")}`);
  process.exit(1);
}
console.log(`no source file over ${FAIL} lines`);
