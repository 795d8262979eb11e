/** dist/console, where the console's pages are built. */
export declare const CONSOLE_OUT: string;
/** True when dist/console/index.html is missing or older than a source of the pages. */
export declare function consoleIsStale(outDir?: string): boolean;
/** Bundles the console's pages into outDir (dist/console); does nothing when fresh unless forced. */
export declare function buildConsole(options?: { outDir?: string; force?: boolean }): void;
