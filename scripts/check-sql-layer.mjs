// Fails when a file of src/ outside store/ builds SQL (a query builder call or a sql`` template):
// the import rules catch SQL libraries, this catches a store handle used to build queries elsewhere.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

const SQL = /\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\(|\bsql`|\.prepare\(\s*["'`]/;
const root = new URL("../src/", import.meta.url).pathname;
const offenders = [];

function walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (relative(root, path) !== "store") walk(path);
    } else if (/\.(ts|js|mjs)$/.test(entry.name) && !entry.name.endsWith(".test.ts")) {
      const lines = readFileSync(path, "utf8").split("\n");
      lines.forEach((line, i) => {
        if (SQL.test(line)) offenders.push(`src/${relative(root, path)}:${i + 1}: ${line.trim()}`);
      });
    }
  }
}

walk(root);
if (offenders.length > 0) {
  console.error(`SQL outside src/store/ (${offenders.length}):\n${offenders.join("\n")}`);
  process.exit(1);
}
console.log("no SQL outside src/store/");
