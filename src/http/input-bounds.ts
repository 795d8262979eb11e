import type { FastifyInstance, FastifyRequest } from "fastify";
import { GatewayError } from "../core/errors.js";

/** Size and nesting bounds of one surface's JSON bodies. */
export interface BodyBounds {
  maxBytes: number;
  maxDepth: number;
}

/**
 * Whether JSON text nests arrays and objects deeper than `limit`. A linear scan of the text,
 * before it is parsed: a body nested thousands deep is refused without building it, and nothing
 * accepted can later overflow a recursive serialiser (ours before an upstream call, or a store's).
 */
export function jsonNestsDeeperThan(text: string, limit: number): boolean {
  // Nesting deeper than `limit` takes more than `limit` opening brackets. Most bodies have a few
  // dozen at most, counted by the engine's own search, far faster than a loop over every character.
  if (!hasMoreOpeningsThan(text, limit)) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      // Jump over the string to its closing quote (one not escaped by an odd run of backslashes).
      let end = text.indexOf('"', i + 1);
      while (end !== -1 && isEscaped(text, end, i)) end = text.indexOf('"', end + 1);
      if (end === -1) return false; // unterminated: the parser will say so
      i = end;
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      depth++;
      if (depth > limit) return true;
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      depth--;
    }
  }
  return false;
}

const OPENINGS = ["{", "["] as const;

/** Whether `text` holds more than `limit` opening brackets, `{` and `[` (those in strings too). */
function hasMoreOpeningsThan(text: string, limit: number): boolean {
  let count = 0;
  for (const bracket of OPENINGS) {
    for (let at = text.indexOf(bracket); at !== -1; at = text.indexOf(bracket, at + 1)) {
      if (++count > limit) return true;
    }
  }
  return false;
}

/** Whether the quote at `at` is preceded by an odd number of backslashes (after `from`). */
function isEscaped(text: string, at: number, from: number): boolean {
  let backslashes = 0;
  for (let k = at - 1; k > from && text.charCodeAt(k) === 92; k--) backslashes++;
  return backslashes % 2 === 1;
}

/** A NUL character or a UTF-16 surrogate without its pair: text no store can hold as it is. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** `String.prototype.isWellFormed` (Node 20+), much faster than the pattern on long text. */
const isWellFormed = (String.prototype as { isWellFormed?: () => boolean }).isWellFormed;

export function isUnstorableText(text: string): boolean {
  if (text.includes("\u0000")) return true;
  return isWellFormed ? !isWellFormed.call(text) : LONE_SURROGATE.test(text);
}

function fieldName(parent: string, key: string | number): string {
  if (typeof key === "number") return `${parent}[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

/** A place in the walked value: its parent's place and its key there (none for the root). */
interface Place {
  node: unknown;
  parent: Place | null;
  key: string | number;
}

/** The field name of a place (`body.contents[0].parts`), made only for the place reported. */
function nameOf(place: Place, root: string): string {
  const keys: Array<string | number> = [];
  for (let at: Place | null = place; at?.parent; at = at.parent) keys.push(at.key);
  let name = root;
  for (let i = keys.length - 1; i >= 0; i--) name = fieldName(name, keys[i] as string | number);
  return name;
}

/**
 * The first place in a parsed value (keys included) holding a string a store cannot hold, or a
 * `__proto__` key; null when there is none. Walks with its own stack, never by recursion.
 */
export function findUnacceptableText(value: unknown, root: string): { field: string; reason: string } | null {
  const stack: Place[] = [{ node: value, parent: null, key: root }];
  while (stack.length > 0) {
    const place = stack.pop() as Place;
    const node = place.node;
    if (typeof node === "string") {
      if (isUnstorableText(node)) {
        return { field: nameOf(place, root), reason: "contains a NUL character or an unpaired surrogate" };
      }
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push({ node: node[i], parent: place, key: i });
    } else if (node !== null && typeof node === "object") {
      for (const key of Object.keys(node)) {
        if (key === "__proto__") {
          return { field: fieldName(nameOf(place, root), key), reason: "is a forbidden field name" };
        }
        if (isUnstorableText(key)) {
          return {
            field: nameOf(place, root),
            reason: "has a field name with a NUL character or an unpaired surrogate",
          };
        }
        stack.push({ node: (node as Record<string, unknown>)[key], parent: place, key });
      }
    }
  }
  return null;
}

function refuse(found: { field: string; reason: string }): GatewayError {
  return new GatewayError("GW_ERR_VALIDATION", `${found.field} ${found.reason}.`, {
    param: found.field.replace(/^(body|params|query)\.?/, "") || null,
  });
}

/** The JSON text of each body parsed on a surface that keeps it (see `installInputBounds`). */
const bodyTexts = new WeakMap<FastifyRequest, string>();

/** The request body's JSON text as received, on a surface installed with `keepText`. */
export function bodyTextOf(request: FastifyRequest): string | undefined {
  return bodyTexts.get(request);
}

/** Parses a JSON body within `bounds`; throws the surface's 400 naming the limit or the field. */
export function parseBoundedJson(text: string, bounds: BodyBounds): unknown {
  if (jsonNestsDeeperThan(text, bounds.maxDepth)) {
    throw new GatewayError(
      "GW_ERR_BODY_TOO_DEEP",
      `The body nests arrays and objects more than ${bounds.maxDepth} levels deep, the limit of this API.`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new GatewayError("GW_ERR_INVALID_JSON", `The body is not valid JSON: ${(err as Error).message}`);
  }
  const found = findUnacceptableText(value, "body");
  if (found) throw refuse(found);
  return value;
}

/**
 * Bounds every JSON body of a surface (size and depth, checked before it is parsed) and refuses
 * text no store can hold in the body, the path and the query, before any route does work.
 * `anyContentType`: the body is read as JSON whatever its content type says (the Gemini surface);
 * `emptyBody`: what an empty body becomes (an error unless given); `keepText`: the body's text is
 * kept for `bodyTextOf` (a route that passes the body on unchanged).
 */
export function installInputBounds(
  app: FastifyInstance,
  bounds: BodyBounds,
  options: { anyContentType?: boolean; emptyBody?: "undefined"; keepText?: boolean } = {},
): void {
  app.addHook("onRoute", (route) => {
    route.bodyLimit ??= bounds.maxBytes;
  });
  const parser = (
    request: FastifyRequest,
    body: string | Buffer,
    done: (err: Error | null, value?: unknown) => void,
  ) => {
    const text = typeof body === "string" ? body : body.toString("utf8");
    if (text === "") {
      if (options.emptyBody === "undefined") return done(null, undefined);
      return done(new GatewayError("GW_ERR_INVALID_JSON", "The body is empty; a JSON value was expected."));
    }
    try {
      const value = parseBoundedJson(text, bounds);
      if (options.keepText) bodyTexts.set(request, text);
      done(null, value);
    } catch (err) {
      done(err as Error);
    }
  };
  if (options.anyContentType) {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser("*", { parseAs: "string", bodyLimit: bounds.maxBytes }, parser);
  } else {
    app.removeContentTypeParser("application/json");
    app.addContentTypeParser("application/json", { parseAs: "string", bodyLimit: bounds.maxBytes }, parser);
  }
  // A callback hook, not an async one: no promise per request for a check that never waits.
  app.addHook("preValidation", (request, _reply, done) => {
    const found =
      findUnacceptableText(request.params, "params") ?? findUnacceptableText(request.query, "query") ?? null;
    done(found ? refuse(found) : undefined);
  });
}
