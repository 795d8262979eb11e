import { TASK_FAMILIES } from "../core/tasks/families.js";
import type { Surface } from "../http/error-schemas.js";

/**
 * How a caller proves who it is on a part of the gateway: a service token in the carrier the
 * surface's clients use (`bearer`: `Authorization: Bearer`; `google`: `x-goog-api-key`,
 * `x-api-key` or `?key=`; `anthropic`: `x-api-key` or a bearer), the admin key (or an operator's
 * console session), a console session (`session`: the `mg_session` cookie), or nothing.
 */
export type AuthKind = "bearer" | "google" | "anthropic" | "admin-key" | "session" | "none";

/** One part of the gateway's URL space. */
export interface RouteArea {
  /** The paths it covers: this path itself and every path below it (`/v1` covers `/v1/...`). */
  path: string;
  /** The surface's name: metrics label and OpenAPI tag. */
  surface:
    | "tasks"
    | "videos"
    | "images"
    | "content"
    | "chat"
    | "embeddings"
    | "models"
    | "redemptions"
    | "admin"
    | "console";
  auth: AuthKind;
  /** The body shape of its errors, raised anywhere from a malformed URL to a failed upstream. */
  errors: Surface;
}

/**
 * The one route table: which surface a path belongs to, how it is authenticated and in which
 * shape its errors are answered. Auth, the error handlers and the API docs all read it. The most
 * specific path wins; a path outside every area (ops, unknown paths) answers in the envelope shape.
 */
export const ROUTE_TABLE: readonly RouteArea[] = [
  { path: "/api/admin", surface: "admin", auth: "admin-key", errors: "envelope" },
  // The console's own API; the routes that sign in (login, signup, invites) need no session.
  { path: "/console/api", surface: "console", auth: "session", errors: "console" },
  ...TASK_FAMILIES.flatMap((family): RouteArea[] => [
    { path: `/${family}`, surface: "tasks", auth: "bearer", errors: "envelope" },
    // An upstream's task callback carries its own secret, not a token.
    { path: `/${family}/callback`, surface: "tasks", auth: "none", errors: "envelope" },
    // Stored task results: the file's key in the path is the capability.
    { path: `/${family}/files`, surface: "tasks", auth: "none", errors: "envelope" },
  ]),
  { path: "/v1", surface: "images", auth: "bearer", errors: "openai" },
  { path: "/v1/images", surface: "images", auth: "bearer", errors: "openai" },
  // Stored images: the file's key in the path is the capability.
  { path: "/v1/images/files", surface: "images", auth: "none", errors: "openai" },
  { path: "/v1/videos", surface: "videos", auth: "bearer", errors: "openai" },
  // A video's stored files, named in its task record: the file's key in the path is the capability.
  // Errors in the envelope, as the other task platforms' files.
  { path: "/video/files", surface: "videos", auth: "none", errors: "envelope" },
  { path: "/v1/chat", surface: "chat", auth: "bearer", errors: "openai" },
  { path: "/v1/messages", surface: "chat", auth: "anthropic", errors: "anthropic" },
  { path: "/v1/models", surface: "models", auth: "bearer", errors: "openai" },
  { path: "/v1/redemptions", surface: "redemptions", auth: "bearer", errors: "openai" },
  { path: "/v1/embeddings", surface: "embeddings", auth: "bearer", errors: "openai" },
  { path: "/v1beta", surface: "content", auth: "google", errors: "google" },
];

/** The areas, most specific first, each with the prefix of the paths below it made once. */
const BY_SPECIFICITY = [...ROUTE_TABLE]
  .sort((a, b) => b.path.length - a.path.length)
  .map((area) => ({ area, below: `${area.path}/` }));

/** The area a URL (path, with or without its query) belongs to, or null outside every area. */
export function routeAreaOf(url: string): RouteArea | null {
  const q = url.indexOf("?");
  const path = q === -1 ? url : url.slice(0, q);
  for (const { area, below } of BY_SPECIFICITY) {
    if (path.startsWith(below) || path === area.path) return area;
  }
  return null;
}

/** The error shape of a URL: its area's, else the envelope. */
export function errorShapeOf(url: string): Surface {
  return routeAreaOf(url)?.errors ?? "envelope";
}
