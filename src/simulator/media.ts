/**
 * Small but real media files for the simulated music upstreams: a PCM WAV that plays, an MP3 that
 * a sniffer recognises (ID3v2 tag, then MPEG-1 Layer III frames), an MP4 that plays (an H.264
 * track), and lyric sheets with section markers. Each is built once per distinct input and
 * kept, so a simulator serving many results does not rebuild them.
 */
import { colourOf } from "./gemini-image.js";
import { mp4Video } from "./mp4-video.js";

const cache = new Map<string, Buffer>();

function remembered(key: string, build: () => Buffer): Buffer {
  const hit = cache.get(key);
  if (hit) return hit;
  const made = build();
  if (cache.size > 64) cache.clear();
  cache.set(key, made);
  return made;
}

/** A mono 16-bit PCM WAV of a sine tone (RIFF/WAVE, `fmt ` then `data`), about a second long. */
export function sineWav(options: { seconds?: number; sampleRate?: number; frequencyHz?: number } = {}): Buffer {
  const seconds = options.seconds ?? 1;
  const sampleRate = options.sampleRate ?? 8000;
  const frequency = options.frequencyHz ?? 440;
  return remembered(`wav:${seconds}:${sampleRate}:${frequency}`, () => {
    const samples = Math.round(seconds * sampleRate);
    const dataBytes = samples * 2;
    const out = Buffer.alloc(44 + dataBytes);
    out.write("RIFF", 0, "ascii");
    out.writeUInt32LE(36 + dataBytes, 4);
    out.write("WAVE", 8, "ascii");
    out.write("fmt ", 12, "ascii");
    out.writeUInt32LE(16, 16); // fmt chunk size
    out.writeUInt16LE(1, 20); // PCM
    out.writeUInt16LE(1, 22); // mono
    out.writeUInt32LE(sampleRate, 24);
    out.writeUInt32LE(sampleRate * 2, 28); // byte rate
    out.writeUInt16LE(2, 32); // block align
    out.writeUInt16LE(16, 34); // bits per sample
    out.write("data", 36, "ascii");
    out.writeUInt32LE(dataBytes, 40);
    for (let i = 0; i < samples; i++) {
      const value = Math.round(Math.sin((2 * Math.PI * frequency * i) / sampleRate) * 0x2000);
      out.writeInt16LE(value, 44 + i * 2);
    }
    return out;
  });
}

/** MPEG-1 Layer III, 128 kbit/s, 44.1 kHz, no CRC, no padding: 417 bytes a frame. */
const MP3_FRAME_HEADER = [0xff, 0xfb, 0x90, 0x00];
const MP3_FRAME_BYTES = 417;

function syncsafe(size: number): Buffer {
  return Buffer.from([(size >> 21) & 0x7f, (size >> 14) & 0x7f, (size >> 7) & 0x7f, size & 0x7f]);
}

function id3Text(frameId: string, text: string): Buffer {
  const body = Buffer.concat([Buffer.from([0x03]), Buffer.from(text, "utf8")]); // 0x03: UTF-8
  const head = Buffer.alloc(10);
  head.write(frameId, 0, "ascii");
  syncsafe(body.length).copy(head, 4);
  return Buffer.concat([head, body]);
}

/**
 * An MP3-looking file: an ID3v2.4 tag carrying the title, then silent MPEG frames (header bytes
 * `FF FB`). Enough for a content sniffer and a player's probe; the frames carry no sound.
 */
export function mp3File(title = "Simulated song", frames = 38): Buffer {
  return remembered(`mp3:${title}:${frames}`, () => {
    const tagBody = id3Text("TIT2", title);
    const tagHead = Buffer.concat([
      Buffer.from("ID3", "ascii"),
      Buffer.from([0x04, 0x00, 0x00]),
      syncsafe(tagBody.length),
    ]);
    const frame = Buffer.alloc(MP3_FRAME_BYTES);
    Buffer.from(MP3_FRAME_HEADER).copy(frame, 0);
    const body = Buffer.alloc(MP3_FRAME_BYTES * frames);
    for (let i = 0; i < frames; i++) frame.copy(body, i * MP3_FRAME_BYTES);
    return Buffer.concat([tagHead, tagBody, body]);
  });
}

/**
 * An MP4 file that plays: two seconds of H.264 pictures whose colours come from the label (see
 * mp4-video.ts), `ftyp` first (major brand `isom`, compatible isom/iso2/avc1/mp41), then `moov`
 * and `mdat`.
 */
export function mp4File(label = "simulated video"): Buffer {
  return remembered(`mp4:${label}`, () =>
    mp4Video({ width: 64, height: 36, seconds: 2, colourAt: (i) => colourOf(`${label}\n${i}`) }),
  );
}

/** A lyric sheet for a prompt: a title and a text with [Verse]/[Chorus] section markers. */
export function lyricSheet(prompt: string, variant = 0): { title: string; text: string } {
  const subject = prompt.trim().split(/\s+/).slice(0, 4).join(" ") || "the night";
  const title = variant === 0 ? `Song of ${subject}` : `${subject} (take ${variant + 1})`;
  const text = [
    "[Verse]",
    `I was thinking of ${subject}`,
    "Underneath a borrowed sky",
    "",
    "[Chorus]",
    `Oh ${subject}, carry me home`,
    "Every road is a song",
    "",
    "[Verse]",
    "Morning finds the window open",
    `And it still sounds like ${subject}`,
    "",
    "[Outro]",
    "Carry me home",
  ].join("\n");
  return { title, text };
}

/** The content type each simulated media file is served with. */
export const MEDIA_TYPES = { wav: "audio/wav", mp3: "audio/mpeg", mp4: "video/mp4" } as const;
