#!/usr/bin/env node
// Runs the compiled gateway (dist/), built by `npm ci` or `npm run build`.
import { existsSync } from "node:fs";

const main = new URL("../dist/main.js", import.meta.url);
if (!existsSync(main)) {
  process.stderr.write("media-gateway: dist/ is missing: run `npm run build` (npm ci builds it too)\n");
  process.exit(1);
}
await import(main.href);
