import fc from "fast-check";

/**
 * Values for fuzz requests: strings that reach deep into handlers, values shaped after a JSON
 * schema (with wrong types and junk mixed in), and realistic bodies of the client surfaces.
 */

/** Strings that reach deeper into handlers than random text does. */
export const VOCABULARY = [
  "image-model",
  "image-model-pro-2k",
  "image-model-2-0.5k",
  "gemini-2.5-flash",
  "audioa",
  "audiob",
  "MUSIC",
  "user",
  "model",
  "default",
  "sse",
  "json",
  "16:9",
  "1:8",
  "enabled",
  "disabled",
  "task",
  "image",
  "content",
  "b64_json",
  "url",
  "data:image/png;base64,iVBORw0KGgo=",
  "data:text/plain;base64,aGVsbG8=",
  "task_0123456789abcdefghijABCDEFGHIJ01",
  "6f1e2d3c-4b5a-4987-8654-3210fedcba98",
  "",
  " ",
  "../../etc/passwd",
  "%00",
  "' OR 1=1 --",
  "{{7*7}}",
  "𝄞🎵",
];

export const text = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...VOCABULARY) },
  { weight: 3, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ minLength: 300, maxLength: 600 }) },
);

export const wild = fc.jsonValue({ maxDepth: 2 });

/** Values shaped like `schema` most of the time, anything JSON the rest of the time. */
export function valueFor(schema: any, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || typeof schema !== "object" || depth > 4) return wild;
  const variants = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(variants) && variants.length > 0) {
    return fc.oneof(...variants.map((v: any) => valueFor(v, depth + 1)));
  }
  let typed: fc.Arbitrary<unknown>;
  if (Array.isArray(schema.enum)) typed = fc.constantFrom(...schema.enum);
  else if (schema.const !== undefined) typed = fc.constant(schema.const);
  else {
    switch (schema.type) {
      case "object": {
        const props: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [k, v] of Object.entries<any>(schema.properties ?? {})) props[k] = valueFor(v, depth + 1);
        const known = fc.record(props, { requiredKeys: [] });
        typed = fc.oneof(
          { weight: 5, arbitrary: known },
          {
            weight: 1,
            arbitrary: fc
              .tuple(known, fc.string({ minLength: 1, maxLength: 8 }), wild)
              .map(([o, k, v]) => ({ ...(o as object), [k]: v })),
          },
        );
        break;
      }
      case "array":
        typed = fc.array(valueFor(schema.items, depth + 1), { maxLength: 4 });
        break;
      case "string":
        typed = text;
        break;
      case "integer":
        typed = fc.oneof(
          fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1_000_000 }),
          fc.integer(),
          fc.constantFrom(0, -1, 2 ** 31, 2 ** 53),
        );
        break;
      case "number":
        typed = fc.oneof(
          fc.double({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000, noNaN: true }),
          fc.double(),
          fc.constantFrom(0, -0.5, 1.005, 1e308),
        );
        break;
      case "boolean":
        typed = fc.boolean();
        break;
      default:
        typed = wild;
    }
  }
  return fc.oneof({ weight: 6, arbitrary: typed }, { weight: 1, arbitrary: wild });
}

const prompt = fc.oneof(
  fc.constantFrom("a quiet harbor at dawn", "lyrics\n[Verse]\nla la"),
  fc.string({ maxLength: 80 }),
);

/** Bodies a client would really send, with random values in the free-text fields. */
export const REALISTIC_BODIES: Record<string, fc.Arbitrary<unknown>> = {
  "/audioa/submit/MUSIC": fc.record(
    { prompt, tags: prompt, title: fc.string({ maxLength: 20 }), make_instrumental: fc.boolean() },
    { requiredKeys: ["prompt"] },
  ),
  "/audiob/submit/MUSIC": fc.record(
    { prompt, style: prompt, title: fc.string({ maxLength: 20 }), instrumental: fc.boolean() },
    { requiredKeys: ["prompt"] },
  ),
  "/v1/images/generations": fc.record(
    {
      model: fc.constantFrom("image-model", "image-model-pro-2k", "image-model-2-0.5k"),
      prompt,
      n: fc.integer({ min: 1, max: 2 }),
      aspect_ratio: fc.constantFrom("1:1", "16:9", "1:8", "7:3"),
    },
    { requiredKeys: ["model", "prompt"] },
  ),
  "/v1beta/models/{model}:generateContent": fc.record({
    contents: fc.array(
      fc.record({
        role: fc.constant("user"),
        parts: fc.array(fc.record({ text: prompt }), { minLength: 1, maxLength: 2 }),
      }),
      {
        minLength: 1,
        maxLength: 2,
      },
    ),
    generationConfig: fc.record({ maxOutputTokens: fc.integer({ min: 1, max: 64 }) }),
  }),
  "/audioa/fetch": fc.record({
    ids: fc.array(fc.constantFrom("task_0123456789abcdefghijABCDEFGHIJ01", "x"), { minLength: 1, maxLength: 3 }),
  }),
};
REALISTIC_BODIES["/v1beta/models/{model}:streamGenerateContent"] =
  REALISTIC_BODIES["/v1beta/models/{model}:generateContent"]!;
