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

/**
 * Text no store can hold as it is: NUL characters and halves of surrogate pairs, alone or inside
 * other text. `JSON.stringify` sends a lone surrogate as its `\uD800` escape, as clients do.
 */
export const UNSTORABLE = ["\u0000", "a\u0000b", "\ud800", "\udfff", "x\ud83dy", "\ude00\ud83d", "task_\u0000"];

/**
 * URLs of every form, for every field that takes one: loopback, private and metadata addresses
 * written in each IPv4 and IPv6 spelling (IPv4 inside IPv6: mapped, translated, compatible, NAT64,
 * 6to4, Teredo), numeric hosts, credentials, other schemes, relative and broken URLs. Every one
 * must be refused without a connection, so a fuzz run still sends nothing beyond loopback.
 */
export const URL_FORMS = [
  "http://127.0.0.1/a.png",
  "http://127.0.0.1:1/a.png",
  "http://localhost/a.png",
  "http://[::1]/a.png",
  "http://0.0.0.0/a.png",
  "http://10.0.0.1/a.png",
  "http://169.254.169.254/latest/meta-data/",
  "http://100.100.100.200/",
  "http://192.168.1.1/",
  "http://172.16.0.1/",
  "http://2130706433/",
  "http://0x7f000001/",
  "http://0177.0.0.1/",
  "http://127.1/",
  "http://[::ffff:127.0.0.1]/",
  "http://[::ffff:7f00:1]/",
  "http://[::ffff:0:127.0.0.1]/",
  "http://[::ffff:0:a9fe:a9fe]/",
  "http://[::127.0.0.1]/",
  "http://[64:ff9b::169.254.169.254]/",
  "http://[64:ff9b:1::a00:1]/",
  "http://[2002:a9fe:a9fe::1]/",
  "http://[2001:0:a00:1::f7f7:f7f7]/",
  "http://[2001:0:808:808::3f57:fefe]/",
  "http://[fd00:ec2::254]/",
  "http://[fe80::1%25lo]/",
  "http://user:pass@127.0.0.1/",
  "https://127.0.0.1:443/",
  "file:///etc/passwd",
  "ftp://127.0.0.1/",
  "gopher://127.0.0.1:6379/_INFO",
  "javascript:alert(1)",
  "data:text/html,<b>x</b>",
  "data:image/png;base64,not-base64!",
  "/relative/path.png",
  "//127.0.0.1/a.png",
  "http://",
  "http:/127.0.0.1",
  "http://a b/",
  "http://[::1/",
  "http://%00/",
  `http://127.0.0.1/${"x".repeat(2100)}`,
];

export const urlValue = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...URL_FORMS) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom(...URL_FORMS), { minLength: 1, maxLength: 3 }) },
);

/** Fields that take a URL the gateway would fetch or call. */
const URL_FIELDS = /^(image|images|callback_url|url|webhook_url)$/;

export const text = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...VOCABULARY) },
  { weight: 1, arbitrary: fc.constantFrom(...UNSTORABLE) },
  { weight: 3, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ minLength: 300, maxLength: 600 }) },
);

export const wild = fc.jsonValue({ maxDepth: 2 });

/** Values shaped like `schema` most of the time, anything JSON the rest of the time. */
export function valueFor(schema: any, depth = 0, field = ""): fc.Arbitrary<unknown> {
  if (URL_FIELDS.test(field)) return fc.oneof({ weight: 3, arbitrary: urlValue }, { weight: 1, arbitrary: wild });
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
        for (const [k, v] of Object.entries<any>(schema.properties ?? {})) props[k] = valueFor(v, depth + 1, k);
        const known = fc.record(props, { requiredKeys: [] });
        typed = fc.oneof(
          { weight: 5, arbitrary: known },
          {
            weight: 1,
            arbitrary: fc
              .tuple(known, fc.oneof(fc.string({ minLength: 1, maxLength: 8 }), fc.constantFrom(...UNSTORABLE)), wild)
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
  fc.constantFrom(...UNSTORABLE),
);

/** Bodies a client would really send, with random values in the free-text fields. */
export const REALISTIC_BODIES: Record<string, fc.Arbitrary<unknown>> = {
  "/audioa/submit/MUSIC": fc.record(
    {
      prompt,
      tags: prompt,
      title: fc.string({ maxLength: 20 }),
      make_instrumental: fc.boolean(),
      callback_url: fc.constantFrom(...URL_FORMS),
    },
    { requiredKeys: ["prompt"] },
  ),
  "/audiob/submit/MUSIC": fc.record(
    {
      prompt,
      style: prompt,
      title: fc.string({ maxLength: 20 }),
      instrumental: fc.boolean(),
      callback_url: fc.constantFrom(...URL_FORMS),
    },
    { requiredKeys: ["prompt"] },
  ),
  "/v1/images/generations": fc.record(
    {
      model: fc.constantFrom("image-model", "image-model-pro-2k", "image-model-2-0.5k"),
      prompt,
      n: fc.integer({ min: 1, max: 2 }),
      aspect_ratio: fc.constantFrom("1:1", "16:9", "1:8", "7:3"),
      image: urlValue,
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
