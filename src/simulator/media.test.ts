import { describe, expect, it } from "vitest";
import { lyricSheet, mp3File, mp4File, sineWav } from "./media.js";

describe("the simulator's media files", () => {
  it("makes a RIFF/WAVE PCM file of about a second whose sizes agree with its header", () => {
    const wav = sineWav();
    expect(wav.toString("ascii", 0, 4)).toBe("RIFF");
    expect(wav.readUInt32LE(4)).toBe(wav.length - 8);
    expect(wav.toString("ascii", 8, 12)).toBe("WAVE");
    expect(wav.toString("ascii", 12, 16)).toBe("fmt ");
    expect(wav.readUInt16LE(20)).toBe(1); // PCM
    const channels = wav.readUInt16LE(22);
    const sampleRate = wav.readUInt32LE(24);
    const bits = wav.readUInt16LE(34);
    expect(wav.readUInt32LE(28)).toBe((sampleRate * channels * bits) / 8);
    expect(wav.toString("ascii", 36, 40)).toBe("data");
    const dataBytes = wav.readUInt32LE(40);
    expect(44 + dataBytes).toBe(wav.length);
    expect(dataBytes / ((sampleRate * channels * bits) / 8)).toBeCloseTo(1, 1);
    expect(wav.subarray(44).some((b) => b !== 0)).toBe(true); // a tone, not silence
  });

  it("makes an MP3-looking file: an ID3v2 tag of the size it states, then MPEG frame sync bytes", () => {
    const mp3 = mp3File("A title");
    expect(mp3.toString("ascii", 0, 3)).toBe("ID3");
    const size = (mp3[6]! << 21) | (mp3[7]! << 14) | (mp3[8]! << 7) | mp3[9]!;
    const frame = 10 + size;
    expect(mp3.subarray(10, frame).toString("utf8")).toContain("A title");
    expect(mp3[frame]).toBe(0xff);
    expect(mp3[frame + 1]! & 0xe0).toBe(0xe0);
    expect(mp3[frame + 1]! & 0x1e).toBe(0x1a); // MPEG-1, Layer III
    expect(mp3[frame + 417]).toBe(0xff); // the next frame follows at the frame length
  });

  it("makes an MP4 that opens with a valid ftyp box, then moov and mdat, whose boxes span the file exactly", () => {
    const mp4 = mp4File();
    expect(mp4.toString("ascii", 4, 8)).toBe("ftyp");
    expect(mp4.toString("ascii", 8, 12)).toBe("isom");
    const ftypSize = mp4.readUInt32BE(0);
    expect((ftypSize - 16) % 4).toBe(0);
    const brands = [];
    for (let at = 16; at < ftypSize; at += 4) brands.push(mp4.toString("ascii", at, at + 4));
    expect(brands).toContain("mp41");
    let at = 0;
    const types = [];
    while (at < mp4.length) {
      types.push(mp4.toString("ascii", at + 4, at + 8));
      at += mp4.readUInt32BE(at);
    }
    expect(at).toBe(mp4.length);
    expect(types).toEqual(["ftyp", "moov", "mdat"]);
  });

  it("writes a lyric sheet with a title and section markers", () => {
    const sheet = lyricSheet("rain over the harbour");
    expect(sheet.title).toContain("rain");
    expect(sheet.text).toMatch(/^\[Verse\]/);
    expect(sheet.text).toContain("[Chorus]");
  });
});
