// Bundles the console's pages (src/console/web) with esbuild into dist/console: one minified
// script and one style sheet under content-hashed names in assets/ (cached for a year), each also
// precompressed with gzip and brotli, and index.html naming them (served no-cache). Every file is
// written beside its final name and renamed into place, so two builds at once never leave a half
// file, and index.html comes last.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

const ROOT = path.resolve(import.meta.dirname, "..");
const SOURCES = path.join(ROOT, "src", "console", "web");
/** The contracts the pages take their types and form rules from: bundled with them. */
const CONTRACTS = path.join(ROOT, "src", "contracts");
export const CONSOLE_OUT = path.join(ROOT, "dist", "console");

function newest(entry) {
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const name of readdirSync(entry)) latest = Math.max(latest, newest(path.join(entry, name)));
  return latest;
}

/** True when index.html is missing or older than a source of the pages or a contract. */
export function consoleIsStale(outDir = CONSOLE_OUT) {
  const index = path.join(outDir, "index.html");
  if (!existsSync(index)) return true;
  return Math.max(newest(SOURCES), newest(CONTRACTS)) > statSync(index).mtimeMs;
}

function writeAtomic(file, bytes) {
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(temp, bytes);
  renameSync(temp, file);
}

function shell(scriptName, styleName) {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>media-gateway console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/assets/${styleName}">
<script type="module" src="/console/assets/${scriptName}"></script>
</head>
<body>
<div id="app"><main class="boot" aria-busy="true">Loading the console…</main></div>
</body>
</html>
`;
}

/** Builds the pages into outDir (dist/console by default). */
export function buildConsole({ outDir = CONSOLE_OUT, force = false } = {}) {
  if (!force && !consoleIsStale(outDir)) return;
  const esbuild = createRequire(import.meta.url)("esbuild");
  const result = esbuild.buildSync({
    entryPoints: [path.join(SOURCES, "main.tsx")],
    bundle: true,
    minify: true,
    format: "esm",
    target: ["es2022"],
    platform: "browser",
    jsx: "automatic",
    jsxImportSource: "preact",
    legalComments: "none",
    write: false,
    outdir: "out",
    entryNames: "app",
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "silent",
  });
  const assets = path.join(outDir, "assets");
  mkdirSync(assets, { recursive: true });
  const names = {};
  for (const file of result.outputFiles) {
    const ext = path.extname(file.path);
    const hash = createHash("sha256").update(file.contents).digest("hex").slice(0, 12);
    const name = `app-${hash}${ext}`;
    names[ext] = name;
    const target = path.join(assets, name);
    if (existsSync(target)) continue;
    writeAtomic(target, file.contents);
    writeAtomic(`${target}.gz`, gzipSync(file.contents, { level: 9 }));
    writeAtomic(
      `${target}.br`,
      brotliCompressSync(file.contents, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
    );
  }
  if (!names[".js"] || !names[".css"]) throw new Error("the console bundle has no script or no style sheet");
  // Older hashed files of earlier builds go, but only a while after they were replaced.
  const keep = new Set([names[".js"], names[".css"]]);
  const cutoff = Date.now() - 60 * 60 * 1000;
  for (const name of readdirSync(assets)) {
    const base = name.replace(/\.(gz|br)$/, "");
    const file = path.join(assets, name);
    if (!keep.has(base) && !name.endsWith(".tmp") && statSync(file).mtimeMs < cutoff) rmSync(file, { force: true });
  }
  writeAtomic(path.join(outDir, "index.html"), shell(names[".js"], names[".css"]));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    buildConsole({ force: process.argv.includes("--force") });
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
}
