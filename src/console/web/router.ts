// A path router under /console: deep links load the same page, links and back/forward move
// without a reload.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { Session } from "./api.js";

export interface RouteDef {
  path: string;
  title: string;
  /** Shown in the navigation when set. */
  nav?: boolean;
  view: (params: Record<string, string>, session: Session) => ComponentChildren;
}

export const BASE = "/console";

/**
 * The page's path under /console. An invite link carries its token in the fragment
 * (/console/#/invite/<token>), which the browser never sends to the server, so it stays out of
 * access logs; such a fragment names the page.
 */
export function currentPath(): string {
  if (location.hash.startsWith("#/invite/")) return location.hash.slice(1);
  const p = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  return p === "" ? "/" : p;
}

export function navigate(to: string, replace = false): void {
  const url = `${BASE}${to}`;
  // Leaving an invite page drops its fragment (and with it the token) from the address bar.
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  dispatchEvent(new PopStateEvent("popstate"));
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const update = () => setPath(currentPath());
    addEventListener("popstate", update);
    addEventListener("hashchange", update);
    return () => {
      removeEventListener("popstate", update);
      removeEventListener("hashchange", update);
    };
  }, []);
  return path;
}

/** Matches "/users/:id" against a path; the named parts, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const a = pattern.split("/");
  const b = path.split("/");
  if (a.length !== b.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < a.length; i++) {
    const seg = a[i] ?? "";
    const val = b[i] ?? "";
    if (seg.startsWith(":")) {
      if (val === "") return null;
      out[seg.slice(1)] = decodeURIComponent(val);
    } else if (seg !== val) return null;
  }
  return out;
}

/** Sends in-app links through the router (a plain click on an <a href="/console/...">). */
export function installLinkHandler(): void {
  document.addEventListener("click", (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    const a = (event.target as Element | null)?.closest?.("a");
    if (!a || a.target || a.hasAttribute("download")) return;
    const href = a.getAttribute("href") ?? "";
    if (!href.startsWith(`${BASE}/`) || href.startsWith(`${BASE}/api/`) || href.startsWith(`${BASE}/assets/`)) return;
    event.preventDefault();
    navigate(href.slice(BASE.length));
  });
}
