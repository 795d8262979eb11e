/**
 * The import rules of src/, held by CI (`npm run lint:imports`). The layers, bottom to top:
 * core/ (rules and use cases, plain data in and out) <- store/, upstreams/, blobs/ (adapters) <-
 * api/, workers/ and the rest <- app.ts and main.ts (the wiring).
 */
/** Libraries and Node modules that reach a database, the network, the file system or a process. */
const npm = (names) => `(^|/)node_modules/(${names.join("|")})/`;
const IO_MODULES = [
  npm(["kysely", "pg", "better-sqlite3", "undici", "fastify", "@fastify/[^/]+", "ioredis", "rate-limiter-flexible", "pino", "prom-client"]),
  "^(node:)?(sqlite|fs|fs/promises|net|http|https|http2|dgram|dns|dns/promises|child_process|worker_threads|cluster|tls|os|process)$",
];
const SQL_LIBRARIES = [npm(["kysely", "pg", "better-sqlite3"]), "^(node:)?sqlite$"];

module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      severity: "error",
      comment: "No import cycles anywhere in src/.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "console-pages-stay-in-the-browser",
      severity: "error",
      comment:
        "The console's pages (console/web/) run in the browser: they import their own files and browser libraries, no server code.",
      from: { path: "^src/console/web/" },
      to: { path: "^src/", pathNot: "^src/console/web/" },
    },
    {
      name: "no-server-code-imports-the-pages",
      severity: "error",
      comment: "The server serves the built pages; it never imports their sources.",
      from: { path: "^src/", pathNot: "^src/console/web/" },
      to: { path: "^src/console/web/" },
    },
    {
      name: "core-is-pure",
      severity: "error",
      comment: "core/ knows no HTTP, no SQL and no I/O: it imports only core/.",
      from: { path: "^src/core/", pathNot: "\\.test\\.ts$" },
      to: { pathNot: "^src/core/", dependencyTypesNot: ["npm", "core"] },
    },
    {
      name: "core-does-no-io",
      severity: "error",
      comment: "core/ imports no library or Node module that does I/O.",
      from: { path: "^src/core/", pathNot: "\\.test\\.ts$" },
      to: { path: IO_MODULES },
    },
    {
      name: "store-imports-only-core",
      severity: "error",
      comment: "store/ implements core's ports: it imports core/ and its own files, nothing above.",
      from: { path: "^src/store/" },
      to: { path: "^src/", pathNot: ["^src/store/", "^src/core/"] },
    },
    {
      name: "sql-only-in-store",
      severity: "error",
      comment: "SQL libraries (their types included) are used under store/ only.",
      from: { path: "^src/", pathNot: "^src/store/" },
      to: { path: SQL_LIBRARIES },
    },
    {
      name: "upstreams-speak-the-wire-only",
      severity: "error",
      comment: "An upstream adapter imports core/ and its own protocol's helpers, never a surface or the store.",
      from: { path: "^src/upstreams/" },
      to: { path: "^src/(api|store|workers|app\\.ts|main\\.ts)" },
    },
    {
      name: "no-climbing-to-the-wiring",
      severity: "error",
      comment: "Only main.ts imports app.ts; nothing imports main.ts.",
      from: { path: "^src/", pathNot: "^src/(main|demo)\\.ts$" },
      to: { path: "^src/(app|main)\\.ts$" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"] },
    exclude: { path: "\\.test\\.ts$" },
  },
};
