/**
 * The import rules of src/, held by CI (`npm run lint:imports`; test/foundation/import-rules.test.ts
 * proves that each fires). The layers, bottom to top:
 * contracts/ (the TypeBox views and bodies shared by HTTP, the command line and the console's
 * server and pages; TypeBox only) and core/ (rules and use cases, plain data in and out) <-
 * store/, upstreams/, blobs/ (adapters) <- http/ (the request and answer helpers of every surface)
 * <- api/ (HTTP only), console/, workers/ and the rest <- wiring/ (ports over adapters) and app/
 * <- main.ts. No two folders import each other, even through other files.
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
      name: "no-folder-cycles",
      severity: "error",
      comment: "No two folders of src/ import each other, directly or through others (a loop the file rule cannot see).",
      scope: "folder",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "console-pages-stay-in-the-browser",
      severity: "error",
      comment:
        "The console's pages (console/web/) run in the browser: they import their own files, the contracts and browser libraries, no server code.",
      from: { path: "^src/console/web/" },
      to: { path: "^src/", pathNot: ["^src/console/web/", "^src/contracts/"] },
    },
    {
      name: "contracts-are-browser-safe",
      severity: "error",
      comment: "contracts/ is shared with the browser: it imports TypeBox and its own files, nothing else.",
      from: { path: "^src/contracts/" },
      to: { pathNot: ["^src/contracts/", "(^|/)node_modules/@sinclair/typebox/"] },
    },
    {
      name: "api-only-adapts-http",
      severity: "error",
      comment: "api/ reaches the store through ports that wiring/ builds: it imports store/ for types only.",
      from: { path: "^src/api/" },
      to: { path: "^src/store/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "api-does-not-import-the-console",
      severity: "error",
      comment: "The console is registered by the app beside the admin API; api/ never imports it.",
      from: { path: "^src/api/" },
      to: { path: "^src/console/" },
    },
    {
      name: "console-never-imports-the-api",
      severity: "error",
      comment:
        "The console is a surface of its own beside api/: what both need (the HTTP helpers, the shared views, " +
        "a video's content and a page of videos) lives in http/, contracts/ and core/, never in api/.",
      from: { path: "^src/console/" },
      to: { path: "^src/api/" },
    },
    {
      name: "http-helpers-sit-below-the-surfaces",
      severity: "error",
      comment:
        "http/ holds the request and answer helpers every surface and the console share: it runs the code of its " +
        "own files, core/ and contracts/ only, and takes other folders' types (a store's row, the blob store).",
      from: { path: "^src/http/" },
      to: { path: "^src/", pathNot: "^src/(http|core|contracts)/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "api-surfaces-stay-apart",
      severity: "error",
      comment:
        "A surface (api/<surface>/) imports its own files and the shared helpers at api/'s root, never another " +
        "surface; api/chat/ holds what the two chat dialects share.",
      from: { path: "^src/api/([^/]+)/" },
      to: { path: "^src/api/", pathNot: ["^src/api/$1/", "^src/api/[^/]+$", "^src/api/chat/"] },
    },
    {
      name: "cli-goes-through-the-wiring",
      severity: "error",
      comment:
        "The command line uses core/, contracts/ and wiring/ (and config, auth, events at their level): " +
        "never a surface, and the store or an upstream only through wiring/ (types excepted).",
      from: { path: "^src/cli/" },
      to: { path: "^src/(api|store|upstreams|console)/", dependencyTypesNot: ["type-only"] },
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
      name: "admin-use-cases-live-in-core",
      severity: "error",
      comment:
        "The operator's use cases are core's (core/admin/, over ports the wiring builds): no folder src/admin/ " +
        "again, so that no surface reaches the store's classes through one.",
      from: { path: "^src/" },
      to: { path: "^src/admin/" },
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
      comment: "An upstream adapter imports core/, net/ and upstreams/ only: never a surface, the store or the wiring.",
      from: { path: "^src/upstreams/" },
      to: { path: "^src/", pathNot: "^src/(core|net|upstreams)/" },
    },
    {
      name: "no-climbing-to-the-wiring",
      severity: "error",
      comment: "Only main.ts imports app/ (the gateway's assembly), besides app/ itself; nothing imports main.ts.",
      from: { path: "^src/", pathNot: "^src/(main\\.ts$|app/)" },
      to: { path: "^src/(app/|main\\.ts$)" },
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
