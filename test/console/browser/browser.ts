import { existsSync } from "node:fs";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { buildConsole } from "../../../scripts/build-console.mjs";

/** The system's Chromium (Debian's package); the tests never download a browser. */
export const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p)) ?? null;

if (CHROMIUM === null) {
  process.stderr.write("\n[media-gateway tests] console browser tests are skipped: no /usr/bin/chromium\n");
}

/** Builds the pages when their sources are newer than dist/console, then starts a headless Chromium. */
export async function launchBrowser(): Promise<Browser> {
  buildConsole();
  return chromium.launch({
    executablePath: CHROMIUM ?? undefined,
    headless: true,
    args: process.getuid?.() === 0 ? ["--no-sandbox"] : [],
  });
}

/**
 * A page that records layout shifts (into window.__shift) and every CSP violation or script
 * error it meets, so tests can assert there were none.
 */
export async function openPage(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error" && /Content Security Policy|Refused to/i.test(msg.text())) problems.push(msg.text());
  });
  // In the page: the browser's own globals (this file is compiled without the DOM library).
  await page.addInitScript(`
    window.__shift = 0;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) if (!entry.hadRecentInput) window.__shift += entry.value;
    }).observe({ type: "layout-shift", buffered: true });
    document.addEventListener("securitypolicyviolation", (e) =>
      console.error("Refused to load: CSP " + e.violatedDirective + " " + e.blockedURI));
  `);
  return { page, problems };
}

/** The labels of the page's form controls: every visible input, select and textarea has one. */
export function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(`(() => {
    const missing = [];
    for (const el of document.querySelectorAll("input, select, textarea")) {
      if (el.type === "hidden") continue;
      const named = el.labels.length > 0 || el.getAttribute("aria-label") || el.getAttribute("aria-labelledby");
      if (!named) missing.push(el.outerHTML.slice(0, 120));
    }
    return missing;
  })()`);
}

/** True when the page scrolls sideways (its content is wider than the window). */
export function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate<boolean>("document.documentElement.scrollWidth > window.innerWidth + 1");
}

/** The layout shift summed since the page started loading (0 when nothing moved). */
export function layoutShift(page: Page): Promise<number> {
  return page.evaluate<number>("window.__shift");
}

/** The page's script can read its cookies: the session cookie must never be among them. */
export function pageCookies(page: Page): Promise<string> {
  return page.evaluate<string>("document.cookie");
}

/** Calls the console's API from inside the page (its cookie), with or without the CSRF header. */
export function fetchInPage(
  page: Page,
  method: string,
  url: string,
  options: { body?: unknown; csrf?: string } = {},
): Promise<{ status: number; body: any }> {
  return page.evaluate(
    async ({ method, url, body, csrf }) => {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (csrf !== undefined) headers["x-csrf-token"] = csrf;
      const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {}
      return { status: res.status, body: parsed };
    },
    { method, url, body: options.body, csrf: options.csrf },
  );
}
