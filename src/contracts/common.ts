import { type TObject, type TProperties, type TSchema, Type } from "@sinclair/typebox";

/**
 * The pieces every contract is built of. A contract is a TypeBox schema shared by the HTTP
 * routes (which validate and document with it), the command line, the console's server and the
 * console's pages (which take their types and form rules from it): this folder imports nothing
 * but TypeBox and itself, so that it runs in the browser too.
 */

/**
 * Marks a field as shown but not changed by a PATCH (it is accepted there and ignored). The mark
 * is in the schema's type too, so that the fields a use case changes can be checked against it.
 */
export const ReadOnly = <T extends TSchema>(schema: T): T & { readOnly: true } => ({ ...schema, readOnly: true });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const UnixSeconds = Type.Integer({ minimum: 0, description: "Unix seconds" });

/** One of the given words, or any text when the list is empty (the pages, which do not know it). */
export function OneOf(values: readonly string[], options: { description?: string } = {}) {
  return values.length > 0
    ? Type.Union(
        values.map((v) => Type.Literal(v)),
        options,
      )
    : Type.String(options);
}

/** The schema of a view, open to every field in a PATCH: writable fields checked, read-only ones ignored. */
// biome-ignore lint/complexity/noBannedTypes: no extra fields by default
export function patchBodyOf<T extends TProperties, E extends TProperties = {}>(view: TObject<T>, extra?: E) {
  return Type.Partial(Type.Object({ ...view.properties, ...(extra ?? ({} as E)) }), {
    additionalProperties: false,
    minProperties: 1,
  });
}

/** The writable fields of a PATCH body: read-only ones (per the view's schema) dropped. */
export function writableFields<T extends Record<string, unknown>>(view: TObject, body: T): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    const field = view.properties[k] as { readOnly?: boolean } | undefined;
    if (v !== undefined && field && !field.readOnly) out[k] = v;
  }
  return out as Partial<T>;
}

/** The success envelope around `data`. */
export function Envelope<T extends TSchema>(data: T, description = "Done: `data` holds the result") {
  return Type.Object(
    { code: Type.Literal("success"), message: Type.String(), data },
    { additionalProperties: false, description },
  );
}

export function ok<T>(data: T) {
  return { code: "success" as const, message: "", data };
}

export const IdParams = Type.Object({ id: Type.String({ pattern: "^[0-9]{1,15}$" }) });
export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: "^[0-9]{1,4}$" })),
    after: Type.Optional(Type.String({ pattern: "^[0-9]{1,15}$" })),
    before: Type.Optional(Type.String({ pattern: "^[0-9]{1,15}$" })),
  },
  { additionalProperties: false },
);

/** The page size a list query asks for, within bounds. */
export function limitOf(raw: string | undefined, fallback = 50, max = 500): number {
  if (raw === undefined) return fallback;
  return Math.min(Math.max(1, Number(raw)), max);
}
