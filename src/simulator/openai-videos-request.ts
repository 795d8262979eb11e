/**
 * The create request of the simulated OpenAI Videos API: read from JSON or multipart, checked
 * the way the real API checks it, with errors in its shape (`{error:{message,type,param,code}}`).
 */

export const VIDEO_MODELS = [
  "sora-2",
  "sora-2-pro",
  "sora-2-2025-10-06",
  "sora-2-pro-2025-10-06",
  "sora-2-2025-12-08",
] as const;
export const VIDEO_SECONDS = ["4", "8", "12"] as const;
export const VIDEO_SIZES = ["720x1280", "1280x720", "1024x1792", "1792x1024"] as const;
const REFERENCE_TYPES = ["image/jpeg", "image/png", "image/webp"];
const CREATE_FIELDS = ["model", "prompt", "seconds", "size", "input_reference"];

/** An error body of the OpenAI API. */
export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function openAiError(
  message: string,
  type = "invalid_request_error",
  param: string | null = null,
  code: string | null = null,
): OpenAiErrorBody {
  return { error: { message, type, param, code } };
}

/** The 404 of an id the API does not know (or no longer keeps). */
export function videoNotFound(id: string): OpenAiErrorBody {
  return openAiError(`Video with id '${id}' not found.`, "invalid_request_error", null, "not_found");
}

/** The reference a create carried: an uploaded file, or a URL (or file id) to one. */
export type VideoReference =
  | { kind: "file"; contentType: string; filename: string; bytes: Buffer }
  | { kind: "url"; url: string }
  | { kind: "file_id"; fileId: string };

/** What the route saw of one create; recorded as the `body` of the received request. */
export interface OpenAiVideosReceived {
  kind: "openai-videos";
  /** How the body came: `json` or `multipart`. */
  encoding: "json" | "multipart";
  model: unknown;
  prompt: unknown;
  seconds: unknown;
  size: unknown;
  reference: VideoReference | null;
}

/** A create that passed the checks. */
export interface VideoCreateRequest {
  model: string;
  prompt: string;
  seconds: (typeof VIDEO_SECONDS)[number];
  size: (typeof VIDEO_SIZES)[number];
  reference: VideoReference | null;
}

function listed(values: readonly string[]): string {
  const quoted = values.map((v) => `'${v}'`);
  return quoted.length < 3
    ? quoted.join(" and ")
    : `${quoted.slice(0, -1).join(", ")}, and ${quoted[quoted.length - 1]}`;
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number") return Number.isInteger(value) ? "an integer" : "a decimal";
  if (typeof value === "boolean") return "a boolean";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function oneOf(field: string, value: unknown, allowed: readonly string[]): OpenAiErrorBody | null {
  if (value === undefined) return null;
  if (typeof value !== "string") {
    return openAiError(
      `Invalid type for '${field}': expected one of ${listed(allowed)}, but got ${typeName(value)} instead.`,
      "invalid_request_error",
      field,
      "invalid_type",
    );
  }
  if (allowed.includes(value)) return null;
  return openAiError(
    `Invalid value: '${value}'. Supported values are: ${listed(allowed)}.`,
    "invalid_request_error",
    field,
    "invalid_value",
  );
}

function referenceFromValue(value: unknown): VideoReference | OpenAiErrorBody | null {
  if (value === undefined || value === "") return null;
  const param = "input_reference";
  if (typeof value === "string") {
    if (/^(https?:|data:)/i.test(value)) return { kind: "url", url: value };
    return openAiError("input_reference must be a file or a URL.", "invalid_request_error", param, "invalid_value");
  }
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const { image_url: url, file_id: fileId, ...rest } = value as Record<string, unknown>;
    const unknown = Object.keys(rest)[0];
    if (unknown)
      return openAiError(`Unknown parameter: 'input_reference.${unknown}'.`, undefined, param, "unknown_parameter");
    if (typeof url === "string" && /^(https?:|data:)/i.test(url)) return { kind: "url", url };
    if (typeof fileId === "string" && fileId !== "") return { kind: "file_id", fileId };
  }
  return openAiError(
    "input_reference must be a file, or an object with image_url or file_id.",
    "invalid_request_error",
    param,
    "invalid_value",
  );
}

/** Reads a multipart body into plain fields, the reference as a file or URL. */
export async function readMultipart(
  raw: Buffer,
  contentType: string,
): Promise<{ fields: Record<string, unknown>; reference: VideoReference | OpenAiErrorBody | null }> {
  const form = await new Response(new Uint8Array(raw), { headers: { "content-type": contentType } }).formData();
  const fields: Record<string, unknown> = {};
  const nested: Record<string, string> = {};
  let reference: VideoReference | OpenAiErrorBody | null = null;
  for (const [name, value] of form.entries()) {
    const part = /^input_reference\[(\w+)\]$/.exec(name);
    if (part?.[1]) nested[part[1]] = String(value);
    else if (name === "input_reference" && typeof value !== "string") {
      const type = value.type.split(";")[0]?.trim().toLowerCase() ?? "";
      reference = REFERENCE_TYPES.includes(type)
        ? { kind: "file", contentType: type, filename: value.name, bytes: Buffer.from(await value.arrayBuffer()) }
        : openAiError(
            `Invalid file type for 'input_reference': '${value.type || "unknown"}'. Supported types are: ${listed(REFERENCE_TYPES)}.`,
            "invalid_request_error",
            "input_reference",
            "invalid_value",
          );
    } else fields[name] = String(value);
  }
  if (!reference && Object.keys(nested).length > 0) reference = referenceFromValue(nested);
  else if (!reference && fields.input_reference !== undefined) reference = referenceFromValue(fields.input_reference);
  delete fields.input_reference;
  return { fields, reference };
}

/** Checks a create's fields (and its reference, already read) the way the OpenAI API does. */
export function checkCreate(
  fields: Record<string, unknown>,
  reference: VideoReference | OpenAiErrorBody | null,
): VideoCreateRequest | OpenAiErrorBody {
  const unknown = Object.keys(fields).find((name) => !CREATE_FIELDS.includes(name));
  if (unknown) return openAiError(`Unknown parameter: '${unknown}'.`, undefined, unknown, "unknown_parameter");
  const { prompt } = fields;
  if (prompt === undefined || prompt === null || prompt === "") {
    return openAiError("Missing required parameter: 'prompt'.", undefined, "prompt", "missing_required_parameter");
  }
  if (typeof prompt !== "string") {
    return openAiError(
      `Invalid type for 'prompt': expected a string, but got ${typeName(prompt)} instead.`,
      undefined,
      "prompt",
      "invalid_type",
    );
  }
  const wrong =
    oneOf("model", fields.model, VIDEO_MODELS) ??
    oneOf("seconds", fields.seconds, VIDEO_SECONDS) ??
    oneOf("size", fields.size, VIDEO_SIZES);
  if (wrong) return wrong;
  if (reference && "error" in reference) return reference;
  return {
    model: (fields.model as string | undefined) ?? "sora-2",
    prompt,
    seconds: (fields.seconds as VideoCreateRequest["seconds"] | undefined) ?? "4",
    size: (fields.size as VideoCreateRequest["size"] | undefined) ?? "720x1280",
    reference: reference ?? null,
  };
}

/** Reads a JSON create: the reference is a URL string or an `{image_url}` / `{file_id}` object. */
export function readJson(body: unknown): {
  fields: Record<string, unknown>;
  reference: VideoReference | OpenAiErrorBody | null;
} {
  const fields =
    body && typeof body === "object" && !Array.isArray(body) ? { ...(body as Record<string, unknown>) } : {};
  const reference = referenceFromValue(fields.input_reference);
  delete fields.input_reference;
  return { fields, reference };
}
