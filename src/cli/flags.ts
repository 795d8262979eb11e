import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";

/** A command-line mistake: usage is printed, the exit code is 2, nothing has been written. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/**
 * How a flag's text becomes a field value. The field is the flag's name in snake_case
 * (`--base-url` -> `base_url`), so flags and admin API fields are one vocabulary.
 * - `text`: as given; `int`, `number`: a number written in full;
 * - `list`: comma-separated; `map`: `a=b,c=d`;
 * - a `?` suffix accepts `none`, which sends `null` (removes a limit or a webhook).
 */
export type FlagKind = "text" | "int" | "number" | "list" | "map" | "int?" | "list?" | "text?";

export type FlagSpec = Record<string, FlagKind>;

export const fieldOf = (flag: string) => flag.replace(/-/g, "_");
export const flagOf = (field: string) => `--${field.replace(/_/g, "-")}`;

function parseValue(flag: string, kind: FlagKind, raw: string): unknown {
  if (kind.endsWith("?") && raw === "none") return null;
  switch (kind.replace("?", "")) {
    case "int":
      if (!/^-?\d{1,16}$/.test(raw)) throw new UsageError(`--${flag} must be a whole number, not "${raw}"`);
      return Number(raw);
    case "number":
      if (!/^-?(\d+\.?\d*|\.\d+)$/.test(raw)) throw new UsageError(`--${flag} must be a number, not "${raw}"`);
      return Number(raw);
    case "list":
      return raw
        .split(",")
        .map((v) => v.trim())
        .filter(Boolean);
    case "map": {
      const out: Record<string, string> = {};
      for (const pair of raw.split(",").filter((p) => p.trim() !== "")) {
        const eq = pair.indexOf("=");
        if (eq <= 0) throw new UsageError(`--${flag} takes name=value pairs separated by commas, not "${pair}"`);
        out[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
      }
      return out;
    }
    default:
      return raw;
  }
}

/** The body that the given flags describe (only flags that were given). */
export function bodyOf(spec: FlagSpec, values: Record<string, string | boolean | undefined>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [flag, kind] of Object.entries(spec)) {
    const raw = values[flag];
    if (typeof raw === "string") body[fieldOf(flag)] = parseValue(flag, kind, raw);
  }
  return body;
}

function describeIssue(path: string, message: string, schema: TSchema): string {
  const field = path.split("/").filter(Boolean)[0];
  const top = field ? (schema.properties as Record<string, TSchema> | undefined)?.[field] : undefined;
  const allowed = top && Array.isArray(top.anyOf) ? top.anyOf.map((s: TSchema) => s.const).filter(Boolean) : [];
  const where = field ? flagOf(field) : "the options";
  if (allowed.length > 0) return `${where} must be one of ${allowed.join(", ")}`;
  return `${where}: ${message.charAt(0).toLowerCase()}${message.slice(1)}`;
}

/**
 * Checks a body against the admin API's own schema for it, so the command line refuses exactly
 * what the HTTP API refuses, and before anything is written.
 */
export function checkBody<T>(schema: TSchema, body: Record<string, unknown>): T {
  // What was given is judged first: a wrong value is a better message than a missing one.
  const issues = [...Value.Errors(schema, body)];
  const given = issues.find((i) => body[i.path.split("/").filter(Boolean)[0] ?? ""] !== undefined);
  if (given) throw new UsageError(describeIssue(given.path, given.message, schema));
  const required = (schema.required as string[] | undefined) ?? [];
  for (const field of required) {
    if (body[field] === undefined) throw new UsageError(`${flagOf(field)} is required`);
  }
  const issue = issues[0];
  if (issue) throw new UsageError(describeIssue(issue.path, issue.message, schema));
  return body as T;
}

/** A positional id: a whole number, or a usage error naming what it is. */
export function idOf(what: string, raw: string | undefined): number {
  if (raw === undefined) throw new UsageError(`the ${what} id is missing`);
  if (!/^[1-9]\d{0,14}$/.test(raw)) throw new UsageError(`the ${what} id must be a whole number, not "${raw}"`);
  return Number(raw);
}
