import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Every import rule of .dependency-cruiser.cjs fires when broken: a small tree of files, each
// breaking one rule (and a few that must pass), is cruised with the project's own configuration.

const ROOT = path.resolve(import.meta.dirname, "../..");

/** path -> source. `x` is a value import, `t` a type-only one. */
const FILES: Record<string, string> = {
  // Targets that exist so that every import resolves.
  "src/core/rule.ts": "export const rule = 1;\n",
  "src/store/rows.ts": "export const rows = 1;\nexport type Row = { id: number };\n",
  "src/api/surfaces.ts": "export const surface = 1;\n",
  "src/http/helper.ts": "export const helper = 1;\n",
  "src/api/admin/routes.ts": "export const routes = 1;\n",
  "src/api/models/list.ts": "export const list = 1;\n",
  "src/console/server/routes.ts": "export const consoleRoutes = 1;\n",
  "src/console/web/page.tsx": "export const page = 1;\n",
  "src/wiring/ports.ts": "export const ports = 1;\n",
  "src/contracts/view.ts": "export const view = 1;\n",
  "src/app/gateway.ts": "export const app = 1;\n",

  // One file per rule that must fire.
  "src/loop/a.ts": 'import { b } from "./b.js";\nexport const a = b;\n',
  "src/loop/b.ts": 'import { a } from "./a.js";\nexport const b = () => a;\n',
  "src/left/one.ts": 'import { two } from "../right/two.js";\nexport const one = two;\n',
  "src/right/three.ts": 'import { four } from "../left/four.js";\nexport const three = four;\n',
  "src/left/four.ts": "export const four = 4;\n",
  "src/right/two.ts": "export const two = 2;\n",
  "src/console/web/bad.tsx": 'import { rows } from "../../store/rows.js";\nexport const bad = rows;\n',
  "src/workers/reads-pages.ts": 'import { page } from "../console/web/page.js";\nexport const x = page;\n',
  "src/contracts/bad.ts": 'import { rule } from "../core/rule.js";\nexport const bad = rule;\n',
  "src/core/bad.ts": 'import { rows } from "../store/rows.js";\nexport const bad = rows;\n',
  "src/core/io.ts": 'import { readFileSync } from "node:fs";\nexport const io = readFileSync;\n',
  "src/admin/operations.ts": "export const operations = 1;\n",
  "src/cli/bad-admin.ts": 'import { operations } from "../admin/operations.js";\nexport const bad = operations;\n',
  "src/store/bad.ts": 'import { surface } from "../api/surfaces.js";\nexport const bad = surface;\n',
  "src/routing/sql.ts": 'import { sql } from "kysely";\nexport const bad = sql;\n',
  "src/api/videos/bad-store.ts": 'import { rows } from "../../store/rows.js";\nexport const bad = rows;\n',
  "src/api/admin/bad-console.ts":
    'import { consoleRoutes } from "../../console/server/routes.js";\nexport const b = consoleRoutes;\n',
  "src/console/server/bad-api.ts": 'import { surface } from "../../api/surfaces.js";\nexport const bad = surface;\n',
  "src/http/bad.ts": 'import { rows } from "../store/rows.js";\nexport const bad = rows;\n',
  "src/api/gemini/bad-surface.ts": 'import { list } from "../models/list.js";\nexport const bad = list;\n',
  "src/cli/bad.ts": 'import { routes } from "../api/admin/routes.js";\nexport const bad = routes;\n',
  "src/cli/bad-store.ts": 'import { rows } from "../store/rows.js";\nexport const bad = rows;\n',
  "src/upstreams/acme/bad.ts": 'import { ports } from "../../wiring/ports.js";\nexport const bad = ports;\n',
  "src/events/bad.ts": 'import { app } from "../app/gateway.js";\nexport const bad = app;\n',

  // Files that keep the rules: none of them may be reported.
  "src/console/web/ok.tsx": 'import { view } from "../../contracts/view.js";\nexport const ok = view;\n',
  "src/contracts/ok.ts": 'import { Type } from "@sinclair/typebox";\nexport const ok = Type.String();\n',
  "src/api/videos/ok-store.ts":
    'import type { Row } from "../../store/rows.js";\nexport const ok = (r: Row) => r.id;\n',
  "src/api/gemini/ok-helper.ts": 'import { surface } from "../surfaces.js";\nexport const ok = surface;\n',
  "src/console/server/ok-helper.ts": 'import { helper } from "../../http/helper.js";\nexport const ok = helper;\n',
  "src/http/ok.ts":
    'import { rule } from "../core/rule.js";\nimport type { Row } from "../store/rows.js";\nexport const ok = (r: Row) => r.id + rule;\n',
  "src/cli/ok.ts":
    'import { view } from "../contracts/view.js";\nimport { ports } from "../wiring/ports.js";\nexport const ok = [view, ports];\n',
  "src/upstreams/acme/ok.ts": 'import { rule } from "../../core/rule.js";\nexport const ok = rule;\n',
};

/** rule name -> the file (or, for folder rules, the folder) it must be reported from. */
const MUST_FIRE: Array<[string, string]> = [
  ["no-cycles", "src/loop/a.ts"],
  ["no-folder-cycles", "src/left"],
  ["console-pages-stay-in-the-browser", "src/console/web/bad.tsx"],
  ["no-server-code-imports-the-pages", "src/workers/reads-pages.ts"],
  ["contracts-are-browser-safe", "src/contracts/bad.ts"],
  ["core-is-pure", "src/core/bad.ts"],
  ["core-does-no-io", "src/core/io.ts"],
  ["admin-use-cases-live-in-core", "src/cli/bad-admin.ts"],
  ["store-imports-only-core", "src/store/bad.ts"],
  ["sql-only-in-store", "src/routing/sql.ts"],
  ["api-only-adapts-http", "src/api/videos/bad-store.ts"],
  ["api-does-not-import-the-console", "src/api/admin/bad-console.ts"],
  ["console-never-imports-the-api", "src/console/server/bad-api.ts"],
  ["http-helpers-sit-below-the-surfaces", "src/http/bad.ts"],
  ["api-surfaces-stay-apart", "src/api/gemini/bad-surface.ts"],
  ["cli-goes-through-the-wiring", "src/cli/bad.ts"],
  ["cli-goes-through-the-wiring", "src/cli/bad-store.ts"],
  ["upstreams-speak-the-wire-only", "src/upstreams/acme/bad.ts"],
  ["no-climbing-to-the-wiring", "src/events/bad.ts"],
];

const MUST_PASS = Object.keys(FILES).filter((f) => /\/ok[-.]/.test(f));

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

let dir: string;
let violations: Violation[];

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "import-rules-"));
  for (const [file, source] of Object.entries(FILES)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), source);
  }
  copyFileSync(path.join(ROOT, ".dependency-cruiser.cjs"), path.join(dir, ".dependency-cruiser.cjs"));
  copyFileSync(path.join(ROOT, "tsconfig.json"), path.join(dir, "tsconfig.json"));
  symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  const bin = path.join(ROOT, "node_modules", ".bin", "depcruise");
  const run = promisify(execFile);
  const args = ["src", "--config", ".dependency-cruiser.cjs", "--output-type", "json"];
  // depcruise exits non-zero when it finds violations; its report is on stdout either way.
  const stdout = await run(bin, args, { cwd: dir, maxBuffer: 64 * 1024 * 1024 }).then(
    (r) => r.stdout,
    (err: { stdout?: string }) => err.stdout ?? "",
  );
  violations = (JSON.parse(stdout) as { summary: { violations: Violation[] } }).summary.violations;
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("import rules", () => {
  it.each(MUST_FIRE)("%s fires on %s", (rule, from) => {
    const hits = violations.filter((v) => v.rule.name === rule && v.from === from);
    expect(hits, JSON.stringify(violations.filter((v) => v.rule.name === rule))).not.toHaveLength(0);
  });

  it("reports nothing from the files that keep the rules", () => {
    expect(violations.filter((v) => MUST_PASS.includes(v.from))).toEqual([]);
  });

  it("every rule of the configuration is proved here", async () => {
    const config = (await import(path.join(ROOT, ".dependency-cruiser.cjs"))).default as {
      forbidden: Array<{ name: string }>;
    };
    const proved = new Set(MUST_FIRE.map(([rule]) => rule));
    expect(config.forbidden.map((r) => r.name).filter((name) => !proved.has(name))).toEqual([]);
  });
});
