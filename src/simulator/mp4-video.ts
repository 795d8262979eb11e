/**
 * A real, playable MP4 built in code: an H.264 track of solid-colour pictures (see h264-pcm.ts)
 * in an ISO base media file (ftyp, moov before mdat so players can start at once). Small on
 * purpose: the simulator scales the upstream's resolution far down and uses a low frame rate.
 */
import { H264_PROFILE, idrPicture, pictureParameterSet, sequenceParameterSet } from "./h264-pcm.js";

export interface Mp4VideoSpec {
  width: number;
  height: number;
  seconds: number;
  /** Pictures a second. Default 2. */
  fps?: number;
  /** The colour of each picture, by its index. */
  colourAt(index: number): readonly [number, number, number];
}

const TIMESCALE = 1000;
const IDENTITY_MATRIX = [0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000];

function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + body.length, 0);
  head.write(type, 4, "ascii");
  return Buffer.concat([head, body]);
}

function fullBox(type: string, version: number, flags: number, ...payload: Buffer[]): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(((version & 0xff) << 24) | (flags & 0xffffff), 0);
  return box(type, head, ...payload);
}

function u32s(...values: number[]): Buffer {
  const out = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => {
    out.writeUInt32BE(v >>> 0, i * 4);
  });
  return out;
}

function u16s(...values: number[]): Buffer {
  const out = Buffer.alloc(values.length * 2);
  values.forEach((v, i) => {
    out.writeUInt16BE(v & 0xffff, i * 2);
  });
  return out;
}

function avcC(sps: Buffer, pps: Buffer): Buffer {
  return box(
    "avcC",
    Buffer.from([1, H264_PROFILE.profileIdc, H264_PROFILE.compatibility, H264_PROFILE.levelIdc, 0xff, 0xe1]),
    u16s(sps.length),
    sps,
    Buffer.from([1]),
    u16s(pps.length),
    pps,
  );
}

function avc1(width: number, height: number, sps: Buffer, pps: Buffer): Buffer {
  const compressor = Buffer.alloc(32);
  return box(
    "avc1",
    Buffer.alloc(6), // reserved
    u16s(1), // data_reference_index
    Buffer.alloc(16), // pre_defined and reserved
    u16s(width, height),
    u32s(0x00480000, 0x00480000, 0), // 72 dpi each way, reserved
    u16s(1), // frame_count
    compressor,
    u16s(0x0018, 0xffff), // depth, pre_defined -1
    avcC(sps, pps),
  );
}

function sampleTable(
  spec: Mp4VideoSpec,
  sizes: number[],
  delta: number,
  chunkOffset: number,
  sps: Buffer,
  pps: Buffer,
) {
  return box(
    "stbl",
    fullBox("stsd", 0, 0, u32s(1), avc1(spec.width, spec.height, sps, pps)),
    fullBox("stts", 0, 0, u32s(1, sizes.length, delta)),
    fullBox("stsc", 0, 0, u32s(1, 1, sizes.length, 1)),
    fullBox("stsz", 0, 0, u32s(0, sizes.length, ...sizes)),
    fullBox("stco", 0, 0, u32s(1, chunkOffset)),
  );
}

function movie(spec: Mp4VideoSpec, sizes: number[], delta: number, chunkOffset: number, sps: Buffer, pps: Buffer) {
  const duration = sizes.length * delta;
  const mvhd = fullBox(
    "mvhd",
    0,
    0,
    u32s(0, 0, TIMESCALE, duration, 0x00010000),
    u16s(0x0100, 0),
    u32s(0, 0, ...IDENTITY_MATRIX, 0, 0, 0, 0, 0, 0, 2),
  );
  const tkhd = fullBox(
    "tkhd",
    0,
    3, // enabled, in movie
    u32s(0, 0, 1, 0, duration, 0, 0),
    u16s(0, 0, 0, 0), // layer, alternate group, volume, reserved
    u32s(...IDENTITY_MATRIX, spec.width << 16, spec.height << 16),
  );
  const mdhd = fullBox("mdhd", 0, 0, u32s(0, 0, TIMESCALE, duration), u16s(0x55c4, 0)); // language "und"
  const hdlr = fullBox(
    "hdlr",
    0,
    0,
    u32s(0),
    Buffer.from("vide", "ascii"),
    u32s(0, 0, 0),
    Buffer.from("VideoHandler\0"),
  );
  const minf = box(
    "minf",
    fullBox("vmhd", 0, 1, u16s(0, 0, 0, 0)),
    box("dinf", fullBox("dref", 0, 0, u32s(1), fullBox("url ", 0, 1))),
    sampleTable(spec, sizes, delta, chunkOffset, sps, pps),
  );
  return box("moov", mvhd, box("trak", tkhd, box("mdia", mdhd, hdlr, minf)));
}

/** An MP4 of `seconds` seconds of solid-colour pictures, `width` x `height` (both even). */
export function mp4Video(spec: Mp4VideoSpec): Buffer {
  const fps = spec.fps ?? 2;
  const count = Math.max(1, Math.round(spec.seconds * fps));
  const delta = Math.round(TIMESCALE / fps);
  const sps = sequenceParameterSet(spec.width, spec.height);
  const pps = pictureParameterSet();
  // Each sample is one access unit: its NAL units, each behind a 4-byte length.
  const samples = Array.from({ length: count }, (_, i) => {
    const picture = idrPicture(spec.width, spec.height, spec.colourAt(i), i % 2);
    return Buffer.concat([u32s(picture.length), picture]);
  });
  const sizes = samples.map((s) => s.length);
  const ftyp = box("ftyp", Buffer.from("isom", "ascii"), u32s(0x200), Buffer.from("isomiso2avc1mp41", "ascii"));
  // The chunk offset does not change the size of the moov, so measure it once and write it again.
  const moovLength = movie(spec, sizes, delta, 0, sps, pps).length;
  const moov = movie(spec, sizes, delta, ftyp.length + moovLength + 8, sps, pps);
  return Buffer.concat([ftyp, moov, box("mdat", ...samples)]);
}
