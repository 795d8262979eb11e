import { describe, expect, it } from "vitest";
import { mp3File, mp4File, sineWav } from "../../simulator/media.js";
import { sniffMediaType } from "./media-sniff.js";

const head = (b: Buffer) => b.subarray(0, 16);
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);

describe("the type of a result file from its first bytes", () => {
  it("knows audio for audio_url", () => {
    expect(sniffMediaType(head(mp3File()), "audio_url")).toBe("audio/mpeg");
    expect(sniffMediaType(head(sineWav()), "audio_url")).toBe("audio/wav");
    expect(sniffMediaType(Buffer.from("OggS\0\0\0\0\0\0\0\0"), "audio_url")).toBe("audio/ogg");
    expect(sniffMediaType(Buffer.from("fLaC\0\0\0\0"), "audio_url")).toBe("audio/flac");
    expect(sniffMediaType(Buffer.from([0xff, 0xf1, 0x50, 0x80]), "audio_url")).toBe("audio/aac");
    expect(sniffMediaType(head(mp4File()), "audio_url")).toBe("audio/mp4");
  });

  it("knows an MP4 for video_url and images for image_url", () => {
    expect(sniffMediaType(head(mp4File()), "video_url")).toBe("video/mp4");
    expect(sniffMediaType(PNG, "image_url")).toBe("image/png");
    expect(sniffMediaType(Buffer.from([0xff, 0xd8, 0xff, 0xe0]), "image_url")).toBe("image/jpeg");
  });

  it("refuses what is not of the field's kind", () => {
    expect(sniffMediaType(Buffer.from("<!doctype html>"), "audio_url")).toBeUndefined();
    expect(sniffMediaType(head(mp3File()), "video_url")).toBeUndefined();
    expect(sniffMediaType(PNG, "audio_url")).toBeUndefined();
    expect(sniffMediaType(head(sineWav()), "image_url")).toBeUndefined();
  });
});
