import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { mp4File } from "../../src/simulator/media.js";
import { simVideoColour, simVideoDimensions, simVideoFile } from "../../src/simulator/openai-videos-content.js";
import { readPng } from "../images/harness.js";

const run = promisify(execFile);

async function installed(tool: string): Promise<boolean> {
  try {
    await run(tool, ["-version"]);
    return true;
  } catch {
    return false;
  }
}

const hasFfprobe = await installed("ffprobe");
const hasFfmpeg = await installed("ffmpeg");
if (!hasFfprobe) console.warn("ffprobe is not installed: the MP4 checks are skipped");
if (!hasFfmpeg) console.warn("ffmpeg is not installed: the decoded-picture check is skipped");

const folder = mkdtempSync(join(tmpdir(), "sim-video-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function saved(name: string, bytes: Buffer): string {
  const path = join(folder, name);
  writeFileSync(path, bytes);
  return path;
}

interface Probe {
  streams: Array<{ codec_type: string; codec_name: string; width: number; height: number; nb_frames: string }>;
  format: { duration: string; format_name: string };
}

async function probe(path: string): Promise<Probe> {
  const { stdout } = await run("ffprobe", ["-v", "error", "-show_streams", "-show_format", "-of", "json", path]);
  return JSON.parse(stdout) as Probe;
}

describe("the simulated video files", () => {
  it.skipIf(!hasFfprobe).each([
    ["720x1280", "4", 36, 64],
    ["1280x720", "8", 64, 36],
    ["1024x1792", "12", 32, 56],
    ["1792x1024", "4", 56, 32],
  ])(
    "makes a %s video of %s seconds an MP4 that ffprobe reads as H.264 of that length",
    async (size, seconds, w, h) => {
      const bytes = simVideoFile({ prompt: `a fox at dusk ${size}`, seconds, size }, "video");
      const info = await probe(saved(`${size}-${seconds}.mp4`, bytes));
      expect(info.format.format_name).toContain("mp4");
      expect(Number(info.format.duration)).toBeCloseTo(Number(seconds), 2);
      const video = info.streams.filter((s) => s.codec_type === "video");
      expect(video).toHaveLength(1);
      expect(video[0]).toMatchObject({ codec_name: "h264", width: w, height: h });
      expect(simVideoDimensions(size)).toEqual({ width: w, height: h });
      const [upstreamW, upstreamH] = size.split("x").map(Number) as [number, number];
      expect(w / h).toBeCloseTo(upstreamW / upstreamH, 1);
    },
  );

  it.skipIf(!hasFfmpeg)("decodes to pictures of the prompt's colours, a new colour each picture", async () => {
    const prompt = "harbour lights";
    const path = saved("colours.mp4", simVideoFile({ prompt, seconds: "4", size: "1280x720" }, "video"));
    const { stdout } = await run(
      "ffmpeg",
      ["-v", "error", "-i", path, "-frames:v", "2", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
      { encoding: "buffer", maxBuffer: 1 << 20 },
    );
    const pictureBytes = 64 * 36 * 3;
    expect(stdout.length).toBe(2 * pictureBytes);
    for (const index of [0, 1]) {
      const centre = index * pictureBytes + (18 * 64 + 32) * 3;
      const decoded = [...stdout.subarray(centre, centre + 3)];
      const expected = simVideoColour(prompt, index);
      // Studio-range YCbCr and back loses a little; each channel stays within a few steps.
      decoded.forEach((value, c) => {
        expect(Math.abs(value - (expected[c] as number))).toBeLessThanOrEqual(6);
      });
    }
  });

  it("gives different prompts different videos, and the same prompt the same bytes", () => {
    const a = simVideoFile({ prompt: "one", seconds: "4", size: "720x1280" }, "video");
    const b = simVideoFile({ prompt: "two", seconds: "4", size: "720x1280" }, "video");
    expect(a.equals(b)).toBe(false);
    expect(simVideoFile({ prompt: "one", seconds: "4", size: "720x1280" }, "video").equals(a)).toBe(true);
  });

  it("makes the thumbnail a PNG of the video's picture size and the spritesheet a larger PNG grid", () => {
    const video = { prompt: "p", seconds: "8", size: "1280x720" };
    expect(readPng(simVideoFile(video, "thumbnail"))).toEqual({ width: 64, height: 36 });
    expect(readPng(simVideoFile(video, "spritesheet"))).toEqual({ width: 5 * 64, height: 4 * 36 });
  });

  it.skipIf(!hasFfprobe)("makes the music upstreams' MP4 result a real video too", async () => {
    const info = await probe(saved("music.mp4", mp4File("simulated video clip-1")));
    expect(info.streams.some((s) => s.codec_type === "video" && s.codec_name === "h264")).toBe(true);
    expect(Number(info.format.duration)).toBeGreaterThan(0);
  });
});
