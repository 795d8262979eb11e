/**
 * The downloadable files of a simulated video: a real MP4 (the video), a PNG of its first
 * picture (the thumbnail) and a PNG grid of its pictures (the spritesheet). Made from the prompt,
 * duration and size alone, so anyone can compute the bytes a video must have.
 */
import { Readable } from "node:stream";
import { colourOf, solidPng } from "./gemini-image.js";
import { mp4Video } from "./mp4-video.js";

export type VideoVariant = "video" | "thumbnail" | "spritesheet";
export const VIDEO_VARIANTS: readonly VideoVariant[] = ["video", "thumbnail", "spritesheet"];

/** The content type each variant is served with. */
export const VARIANT_TYPES: Record<VideoVariant, string> = {
  video: "video/mp4",
  thumbnail: "image/png",
  spritesheet: "image/png",
};

/** Pictures a second of the simulated videos. */
export const SIM_VIDEO_FPS = 2;

/** The picture size of a simulated video: the upstream's size scaled far down, its aspect kept. */
export function simVideoDimensions(size: string): { width: number; height: number } {
  switch (size) {
    case "1280x720":
      return { width: 64, height: 36 };
    case "1024x1792":
      return { width: 32, height: 56 };
    case "1792x1024":
      return { width: 56, height: 32 };
    default:
      return { width: 36, height: 64 };
  }
}

/** The colour of picture `index` of a video made from `prompt`. */
export function simVideoColour(prompt: string, index: number): [number, number, number] {
  return colourOf(`${prompt}\n${index}`);
}

const cache = new Map<string, Buffer>();

/** The bytes of one variant of a video of `prompt`, `seconds` long, at `size`. */
export function simVideoFile(video: { prompt: string; seconds: string; size: string }, variant: VideoVariant): Buffer {
  const key = `${variant}\n${video.seconds}\n${video.size}\n${video.prompt}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const { width, height } = simVideoDimensions(video.size);
  const frames = Number(video.seconds) * SIM_VIDEO_FPS;
  const columns = Math.min(frames, 5);
  const made =
    variant === "video"
      ? mp4Video({
          width,
          height,
          seconds: Number(video.seconds),
          fps: SIM_VIDEO_FPS,
          colourAt: (i) => simVideoColour(video.prompt, i),
        })
      : variant === "thumbnail"
        ? solidPng(width, height, simVideoColour(video.prompt, 0))
        : solidPng(width * columns, height * Math.ceil(frames / columns), simVideoColour(video.prompt, 0));
  if (cache.size > 64) cache.clear();
  cache.set(key, made);
  return made;
}

/** A `Range: bytes=...` header resolved against a body of `size` bytes (one range only). */
export function byteRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | "unsatisfiable" | null {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) return null;
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || end < start) return "unsatisfiable";
  return { start, end };
}

/** The bytes written in ten pieces spread over `totalMs`, as a slow upstream sends them. */
export function trickle(bytes: Buffer, totalMs: number): Readable {
  const pieces = 10;
  const pieceSize = Math.ceil(bytes.length / pieces);
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  return new Readable({
    read() {
      if (timer) return;
      timer = setTimeout(() => {
        timer = undefined;
        const piece = bytes.subarray(sent, sent + pieceSize);
        sent += piece.length;
        this.push(piece);
        if (sent >= bytes.length) this.push(null);
      }, totalMs / pieces);
    },
    destroy(error, callback) {
      if (timer) clearTimeout(timer);
      callback(error);
    },
  });
}
