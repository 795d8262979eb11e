/** Image formats accepted as input and stored as output. */
export type ImageMime = "image/png" | "image/jpeg" | "image/webp";

export const ACCEPTED_IMAGE_MIMES: readonly ImageMime[] = ["image/png", "image/jpeg", "image/webp"];

/**
 * The real format of image bytes, from their signature; null when they are not a PNG, JPEG or
 * WebP image. A declared content type is never trusted on its own.
 */
export function sniffImageType(bytes: Uint8Array): ImageMime | null {
  if (
    bytes.length >= 8 &&
    bytes[0] === 0x89 &&
    bytes[1] === 0x50 &&
    bytes[2] === 0x4e &&
    bytes[3] === 0x47 &&
    bytes[4] === 0x0d &&
    bytes[5] === 0x0a &&
    bytes[6] === 0x1a &&
    bytes[7] === 0x0a
  ) {
    return "image/png";
  }
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg";
  if (
    bytes.length >= 12 &&
    String.fromCharCode(bytes[0]!, bytes[1]!, bytes[2]!, bytes[3]!) === "RIFF" &&
    String.fromCharCode(bytes[8]!, bytes[9]!, bytes[10]!, bytes[11]!) === "WEBP"
  ) {
    return "image/webp";
  }
  return null;
}
