/**
 * What of a request may be logged: credentials in the URL's query and path and in the headers are
 * blanked, however they are spelled or encoded.
 */

/** Query parameters that carry credentials, by their decoded, lower-cased name. */
const SECRET_PARAMS = new Set([
  "key",
  "api_key",
  "apikey",
  "api-key",
  "x-api-key",
  "x-goog-api-key",
  "token",
  "access_token",
  "admin_key",
  "x-admin-key",
  "authorization",
]);

/** Headers that carry credentials (Node gives header names in lower case). */
export const SECRET_HEADERS = [
  "authorization",
  "proxy-authorization",
  "x-api-key",
  "x-goog-api-key",
  "x-admin-key",
  "cookie",
] as const;

const REDACTED = "[redacted]";

/** `%6B` and `+` decoded, whatever else the text holds (a stray `%` stays as it is). */
function decodeLeniently(text: string): string {
  const spaced = text.replace(/\+/g, " ");
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced.replace(/%([0-9a-f]{2})/gi, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  }
}

function isSecretParam(rawName: string): boolean {
  return SECRET_PARAMS.has(decodeLeniently(rawName).trim().toLowerCase());
}

/** URLs that redaction leaves as they are, remembered (bounded, and only short ones). */
const CLEAN_URLS_MAX = 1024;
const CLEAN_URL_MAX_LENGTH = 512;
const cleanUrls = new Set<string>();

/**
 * A URL as it may be logged. The query is split into its parameters and each name decoded before
 * it is judged, so a credential parameter is blanked however it is spelled (`?key=`, `?%6Bey=`,
 * `?KEY=`); the upstream callback path's secret and a console invite's token are blanked too.
 *
 * A URL that comes out unchanged holds nothing to blank, and most requests repeat a few paths
 * (`/v1beta/models/{model}:streamGenerateContent?alt=sse`): such URLs are remembered and given
 * back at once. A URL that had something blanked is never remembered.
 */
export function redactUrl(url: string): string {
  if (cleanUrls.has(url)) return url;
  const redacted = redactQueryAndPath(url);
  if (redacted === url && url.length <= CLEAN_URL_MAX_LENGTH) {
    if (cleanUrls.size >= CLEAN_URLS_MAX) cleanUrls.clear();
    cleanUrls.add(url);
  }
  return redacted;
}

function redactQueryAndPath(url: string): string {
  const hash = url.indexOf("#");
  const bare = hash === -1 ? url : url.slice(0, hash);
  const mark = bare.indexOf("?");
  const path = (mark === -1 ? bare : bare.slice(0, mark)).replace(/(\/(?:callback|invites)\/)[^/]+/, `$1${REDACTED}`);
  if (mark === -1) return path;
  const query = bare
    .slice(mark + 1)
    .split("&")
    .map((part) => {
      const eq = part.indexOf("=");
      const name = eq === -1 ? part : part.slice(0, eq);
      return eq !== -1 && isSecretParam(name) ? `${name}=${REDACTED}` : part;
    })
    .join("&");
  return `${path}?${query}`;
}

/** Request headers as they may be logged: every credential header blanked. */
export function redactHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = (SECRET_HEADERS as readonly string[]).includes(name.toLowerCase()) ? REDACTED : value;
  }
  return out;
}
