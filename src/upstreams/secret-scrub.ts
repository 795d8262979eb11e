/**
 * Blanking a channel key out of text an upstream sent back. Upstreams echo credentials in more
 * shapes than one: spaced out, split by line breaks, URL-encoded, base64 (at any alignment inside a
 * longer encoded string), base64url or hex. Every such copy is replaced by `[redacted]`.
 */

const REDACTED = "[redacted]";
/** Shorter secrets are not scrubbed: their copies would match ordinary words. */
const MIN_SECRET_LENGTH = 4;

interface Form {
  text: string;
  /** Encodings whose letters may be upper or lower case (hex, percent-encoding). */
  anyCase: boolean;
}

/**
 * The base64 characters that depend only on the secret's bytes, for each of the three byte
 * alignments the secret can have inside a longer encoded string.
 */
function base64Cores(bytes: Buffer): string[] {
  const cores: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64");
    const from = Math.ceil((8 * offset) / 6);
    const to = Math.floor((8 * (offset + bytes.length)) / 6);
    cores.push(encoded.slice(from, to));
  }
  return cores;
}

function formsOf(secret: string): Form[] {
  const bytes = Buffer.from(secret, "utf8");
  const percentAll = [...bytes].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("");
  const forms: Form[] = [
    { text: secret, anyCase: false },
    { text: encodeURIComponent(secret), anyCase: true },
    { text: percentAll, anyCase: true },
    { text: bytes.toString("hex"), anyCase: true },
  ];
  for (const core of base64Cores(bytes)) {
    forms.push({ text: core, anyCase: false });
    forms.push({ text: core.replace(/\+/g, "-").replace(/\//g, "_"), anyCase: false });
  }
  const seen = new Set<string>();
  return forms.filter((f) => {
    const key = `${f.anyCase}:${f.text}`;
    if (f.text.length < MIN_SECRET_LENGTH || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Characters of a form with any run of white space (or escaped line breaks) allowed between two. */
function spacedPattern(text: string): string {
  const gap = "(?:\\s|\\\\[nrt])*";
  return [...text].map((c) => c.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&")).join(gap);
}

const patterns = new Map<string, RegExp[]>();
const MAX_CACHED = 1000;

function patternsFor(secret: string): RegExp[] {
  let list = patterns.get(secret);
  if (!list) {
    // Longest first, so a long encoded copy is blanked whole before a shorter form inside it.
    const forms = formsOf(secret).sort((a, b) => b.text.length - a.text.length);
    list = forms.map((f) => new RegExp(spacedPattern(f.text), f.anyCase ? "gi" : "g"));
    if (patterns.size >= MAX_CACHED) patterns.clear();
    patterns.set(secret, list);
  }
  return list;
}

/** `text` with every copy of `secret` (in any spacing or common encoding) blanked. */
export function withoutSecret(text: string, secret: string | undefined): string {
  if (!secret || secret.length < MIN_SECRET_LENGTH) return text;
  let out = text;
  for (const pattern of patternsFor(secret)) out = out.replace(pattern, REDACTED);
  return out;
}
