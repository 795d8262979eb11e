/**
 * What of a request may be logged: credentials in the URL's query and path and in the headers are
 * blanked, however they are spelled or encoded, and so is anything in the URL shaped like a key,
 * whatever its name or place.
 */

/** Query and matrix parameters that carry credentials, by their normalised name (see paramName). */
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

/** `text` decoded again while it still holds escapes, three times at most (`%256B` is `k` twice decoded). */
function decodeRepeatedly(text: string): string {
  let decoded = decodeLeniently(text);
  for (let round = 0; round < 2 && decoded.includes("%"); round++) decoded = decodeLeniently(decoded);
  return decoded;
}

/** A name with nothing to decode or drop (`alt`, `page_size`). */
const PLAIN_NAME = /^[a-z0-9_.-]*$/;

/**
 * A parameter's name as some server along the way may read it: percent-decoded (repeatedly, for
 * `%256Bey`), without bracket suffixes (`key[]`, `key[0]`), control characters (`key%00`) or white
 * space, in lower case.
 */
function paramName(raw: string): string {
  if (PLAIN_NAME.test(raw)) return raw;
  return decodeRepeatedly(raw)
    .replace(/\[[^\]]*\]?/g, "")
    .replace(/[\s\p{Cc}\]]/gu, "")
    .toLowerCase();
}

function isSecretParam(rawName: string): boolean {
  return SECRET_PARAMS.has(paramName(rawName));
}

/** The characters of a key: letters, digits, `-` and `_`. */
const KEY_CHAR = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") KEY_CHAR[c.charCodeAt(0)] = 1;

/** The shortest run of key characters that may be a key: a known prefix and 16 (`hf_` and 16). */
const MIN_KEY_RUN = 19;

/** Prefixes of common API keys: this gateway's tokens (`sk-`) and admin keys (`adm-`), and vendors'. */
const KEY_PREFIX = /^(?:(?:sk|adm|xai|gsk|hf|gh[oprsu]|github_pat|glpat)[-_][A-Za-z0-9_-]{16}|AIza[A-Za-z0-9_-]{30})/;

/** Leading lower-case kind words of an id (`task_`, `vid_`), which say nothing of its randomness. */
const KIND_WORDS = /^(?:[a-z]+[-_])+/;

/**
 * Whether a run of key characters looks like a key: a known key prefix and 16 characters more; or,
 * after its kind words, 40 characters or more holding a capital letter (random base62 or base64
 * text: a task id's 32 are shorter) or made of hex digits alone (a digest). Model names have no
 * capitals and letters past `f`; request ids are 36 characters.
 */
function isKeyShaped(run: string): boolean {
  if (KEY_PREFIX.test(run)) return true;
  const body = run.replace(KIND_WORDS, "");
  return body.length >= 40 && (/[A-Z]/.test(body) || /^[0-9a-f_-]+$/.test(body));
}

/**
 * `text` with every run of key characters that is shaped like a key replaced by `blank`; `text`
 * itself when there is none. One pass over the characters: most text has no run long enough.
 */
function replaceKeyShapes(text: string, blank: string): string {
  let out: string | null = null;
  let kept = 0;
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 0;
    if (c < 128 && KEY_CHAR[c] === 1) {
      if (start === -1) start = i;
      continue;
    }
    if (start !== -1 && i - start >= MIN_KEY_RUN && isKeyShaped(text.slice(start, i))) {
      out = `${out ?? ""}${text.slice(kept, start)}${blank}`;
      kept = i;
    }
    start = -1;
  }
  return out === null ? text : out + text.slice(kept);
}

/** `text` (a path, a segment, a parameter's name or value) with what is shaped like a key blanked. */
function withoutKeyShapes(text: string): string {
  if (text.length < MIN_KEY_RUN) return text;
  if (text.includes("%")) {
    // An encoded key is judged decoded; the whole piece goes, as its escapes are no part of a run.
    const decoded = decodeRepeatedly(text);
    return replaceKeyShapes(decoded, "") === decoded ? text : REDACTED;
  }
  return replaceKeyShapes(text, REDACTED);
}

/** A `name=value` parameter (of the query, or a path segment's matrix parameter) as it may be logged. */
function redactParam(part: string): string {
  const eq = part.indexOf("=");
  if (eq === -1) return withoutKeyShapes(part);
  const name = part.slice(0, eq);
  if (isSecretParam(name)) return `${name}=${REDACTED}`;
  return `${withoutKeyShapes(name)}=${withoutKeyShapes(part.slice(eq + 1))}`;
}

/** URLs that redaction leaves as they are, remembered (bounded, and only short ones). */
const CLEAN_URLS_MAX = 1024;
const CLEAN_URL_MAX_LENGTH = 512;
const cleanUrls = new Set<string>();

/**
 * A URL as it may be logged. The query is split into its parameters (at `&` and `;`) and each
 * name normalised before it is judged (paramName), so a credential parameter is blanked however it
 * is spelled (`?key=`, `?%6Bey=`, `?KEY=`, `?key%00=`, `?key[]=`); a path segment's matrix
 * parameters (`;key=`) are judged alike; the upstream callback path's secret and a console
 * invite's token are blanked; and whatever is shaped like a key (isKeyShaped) is blanked wherever
 * it stands, in a path segment or a parameter of any name.
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
  const path = redactPath(mark === -1 ? bare : bare.slice(0, mark));
  if (mark === -1) return path;
  const query = bare.slice(mark + 1).replace(/[^&;]+/g, redactParam);
  return `${path}?${query}`;
}

/** Segments after which the next is a secret by its place. */
const SECRET_AFTER = new Set(["callback", "invites"]);

function redactPath(path: string): string {
  // Most paths hold no escape, no matrix parameter and no secret by its place: their key-shaped
  // runs are found in one pass over the whole path, as no run crosses a `/`.
  if (!path.includes("%") && !path.includes(";") && !path.includes("/callback/") && !path.includes("/invites/")) {
    return withoutKeyShapes(path);
  }
  const segments = path.split("/");
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] as string;
    if (i > 0 && SECRET_AFTER.has(segments[i - 1] as string) && segment !== "") {
      segments[i] = REDACTED;
      continue;
    }
    const semi = segment.indexOf(";");
    segments[i] =
      semi === -1
        ? withoutKeyShapes(segment)
        : `${withoutKeyShapes(segment.slice(0, semi))};${segment.slice(semi + 1).replace(/[^;]+/g, redactParam)}`;
  }
  return segments.join("/");
}

/** Request headers as they may be logged: every credential header blanked. */
export function redactHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = (SECRET_HEADERS as readonly string[]).includes(name.toLowerCase()) ? REDACTED : value;
  }
  return out;
}
