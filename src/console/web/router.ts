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

export function currentPath(): string {
  const p = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  return p === "" ? "/" : p;
}

export function navigate(to: string, replace = false): void {
  const url = `${BASE}${to}`;
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  dispatchEvent(new PopStateEvent("popstate"));
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const update = () => setPath(currentPath());
    addEventListener("popstate", update);
    return () => removeEventListener("popstate", update);
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
