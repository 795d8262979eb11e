// Compiles src/ into dist/ (always with --force) when dist/ is missing or older than any source file, so that `npm start`
// and the tests always run the JavaScript of the current sources; the console's pages are bundled
// into dist/console/ with it (scripts/build-console.mjs). Without the compiler (an install
// with --omit=dev) an existing dist/ is used as it is.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { buildConsole } from "./build-console.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
const STAMP = path.join(ROOT, "dist", ".build-stamp");
const INPUTS = ["src", "tsconfig.json", "tsconfig.build.json", "package.json"];

function newest(entry) {
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const name of readdirSync(entry)) latest = Math.max(latest, newest(path.join(entry, name)));
  return latest;
}

export function isStale() {
  if (!existsSync(STAMP)) return true;
  const built = statSync(STAMP).mtimeMs;
  return INPUTS.some((input) => existsSync(path.join(ROOT, input)) && newest(path.join(ROOT, input)) > built);
}

export function buildIfStale({ force = false } = {}) {
  if (!force && !isStale()) return;
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  } catch {
    if (existsSync(path.join(ROOT, "dist", "main.js"))) return;
    throw new Error("dist/ is missing and TypeScript is not installed: run npm ci (with dev dependencies)");
  }
  rmSync(path.join(ROOT, "dist"), { recursive: true, force: true });
  const result = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: ROOT, stdio: "inherit" });
  if (result.status !== 0) throw new Error(`the build failed (tsc exited ${result.status ?? result.signal})`);
  buildConsole({ force: true });
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    buildIfStale({ force: process.argv.includes("--force") });
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
}
