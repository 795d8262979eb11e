import { createHash } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { GatewayError } from "../../core/errors.js";
import { findUnacceptableText } from "../../http/input-bounds.js";

/** A file field of a form: what it is (fingerprinted), its bytes beside (not enumerable). */
export interface FormFile {
  file_name: string;
  content_type: string;
  size: number;
  sha256: string;
  readonly bytes: Buffer;
}

export function isFormFile(value: unknown): value is FormFile {
  return !!value && typeof value === "object" && Buffer.isBuffer((value as { bytes?: unknown }).bytes);
}

async function formFile(file: File): Promise<FormFile> {
  const bytes = Buffer.from(await file.arrayBuffer());
  const out = {
    file_name: file.name || "file",
    content_type: file.type || "application/octet-stream",
    size: bytes.length,
    sha256: createHash("sha256").update(bytes).digest("hex"),
  };
  Object.defineProperty(out, "bytes", { value: bytes, enumerable: false });
  return out as FormFile;
}

/**
 * Reads a multipart form into a plain object: text fields as strings, files as FormFiles, and
 * `name[key]` fields (how form encoders write an object) as nested objects.
 */
export async function readForm(body: Buffer, contentType: string): Promise<Record<string, unknown>> {
  let form: FormData;
  try {
    form = await new Response(new Uint8Array(body), { headers: { "content-type": contentType } }).formData();
  } catch (err) {
    throw new GatewayError("GW_ERR_BAD_REQUEST", `The multipart body could not be read: ${(err as Error).message}`);
  }
  const out: Record<string, unknown> = {};
  for (const [name, value] of form.entries()) {
    if (name.includes("__proto__")) {
      throw new GatewayError("GW_ERR_VALIDATION", `${name} is a forbidden field name.`, { param: name });
    }
    const parsed = typeof value === "string" ? value : await formFile(value as File);
    const nested = /^([^[\]]+)\[([^[\]]+)\]$/.exec(name);
    if (nested?.[1] && nested[2]) {
      const existing = out[nested[1]];
      const parent = existing && typeof existing === "object" ? (existing as Record<string, unknown>) : {};
      parent[nested[2]] = parsed;
      out[nested[1]] = parent;
    } else {
      out[name] = parsed;
    }
  }
  return out;
}

/** Lets a surface take `multipart/form-data` bodies (up to `maxBytes`), read by `readForm`. */
export function acceptMultipart(app: FastifyInstance, maxBytes: number): void {
  app.addContentTypeParser("multipart/form-data", { parseAs: "buffer", bodyLimit: maxBytes }, (request, body, done) => {
    readForm(body as Buffer, String(request.headers["content-type"]))
      .then((value) => {
        // The same refusals as a JSON body's: text no store can hold, named by its field.
        const found = findUnacceptableText(value, "");
        if (!found) return done(null, value);
        const param = found.field.replace(/^\./, "");
        done(new GatewayError("GW_ERR_VALIDATION", `${param} ${found.reason}.`, { param }));
      })
      .catch((err: Error) => done(err));
  });
}
