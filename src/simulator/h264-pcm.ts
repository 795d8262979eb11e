/**
 * A minimal H.264 (Baseline profile, CAVLC) encoder whose every macroblock is I_PCM: the samples
 * are written raw, so no transform, prediction or entropy coding of residuals is needed and any
 * decoder shows exactly the colours given. Only the parameter sets and slice headers are coded
 * (exp-Golomb). Pictures are small solid colours; that is all the simulator needs.
 */

/** Writes bits most significant first, with the exp-Golomb codes of the H.264 syntax. */
class BitWriter {
  private readonly bytes: number[] = [];
  private current = 0;
  private used = 0;

  bit(value: number): void {
    this.current = (this.current << 1) | (value & 1);
    this.used += 1;
    if (this.used === 8) {
      this.bytes.push(this.current);
      this.current = 0;
      this.used = 0;
    }
  }

  bits(value: number, count: number): void {
    for (let i = count - 1; i >= 0; i--) this.bit((value >>> i) & 1);
  }

  /** ue(v): unsigned exp-Golomb. */
  ue(value: number): void {
    const coded = value + 1;
    const length = 32 - Math.clz32(coded);
    this.bits(0, length - 1);
    this.bits(coded, length);
  }

  /** se(v): signed exp-Golomb. */
  se(value: number): void {
    this.ue(value > 0 ? 2 * value - 1 : -2 * value);
  }

  aligned(): boolean {
    return this.used === 0;
  }

  alignWithZeros(): void {
    while (!this.aligned()) this.bit(0);
  }

  byte(value: number): void {
    this.bytes.push(value & 0xff);
  }

  /** rbsp_trailing_bits(): a one, then zeros to the byte boundary. */
  trailing(): Buffer {
    this.bit(1);
    this.alignWithZeros();
    return Buffer.from(this.bytes);
  }
}

/** Wraps an RBSP into a NAL unit, inserting emulation prevention bytes (00 00 0x -> 00 00 03 0x). */
function nalUnit(refIdc: number, type: number, rbsp: Buffer): Buffer {
  const out: number[] = [(refIdc << 5) | type];
  let zeros = 0;
  for (const byte of rbsp) {
    if (zeros >= 2 && byte <= 3) {
      out.push(3);
      zeros = 0;
    }
    out.push(byte);
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  return Buffer.from(out);
}

/** Profile and level the stream declares: Baseline (66, constraint sets 0 and 1), level 3.0. */
export const H264_PROFILE = { profileIdc: 66, compatibility: 0xc0, levelIdc: 30 } as const;

/** The picture geometry: whole macroblocks, cropped to the even width and height asked for. */
function geometry(width: number, height: number) {
  if (width < 2 || height < 2 || width % 2 || height % 2)
    throw new Error(`picture ${width}x${height}: sides must be even`);
  const mbWidth = Math.ceil(width / 16);
  const mbHeight = Math.ceil(height / 16);
  return { mbWidth, mbHeight, cropRight: (mbWidth * 16 - width) / 2, cropBottom: (mbHeight * 16 - height) / 2 };
}

/** The sequence parameter set NAL unit for pictures of `width` x `height`. */
export function sequenceParameterSet(width: number, height: number): Buffer {
  const g = geometry(width, height);
  const w = new BitWriter();
  w.bits(H264_PROFILE.profileIdc, 8);
  w.bits(H264_PROFILE.compatibility, 8);
  w.bits(H264_PROFILE.levelIdc, 8);
  w.ue(0); // seq_parameter_set_id
  w.ue(0); // log2_max_frame_num_minus4
  w.ue(2); // pic_order_cnt_type: order follows frame_num (no reordering)
  w.ue(1); // max_num_ref_frames
  w.bit(0); // gaps_in_frame_num_value_allowed_flag
  w.ue(g.mbWidth - 1);
  w.ue(g.mbHeight - 1);
  w.bit(1); // frame_mbs_only_flag
  w.bit(1); // direct_8x8_inference_flag
  const cropped = g.cropRight > 0 || g.cropBottom > 0;
  w.bit(cropped ? 1 : 0);
  if (cropped) {
    w.ue(0);
    w.ue(g.cropRight);
    w.ue(0);
    w.ue(g.cropBottom);
  }
  w.bit(0); // vui_parameters_present_flag
  return nalUnit(3, 7, w.trailing());
}

/** The picture parameter set NAL unit: CAVLC, one slice group, deblocking controlled per slice. */
export function pictureParameterSet(): Buffer {
  const w = new BitWriter();
  w.ue(0); // pic_parameter_set_id
  w.ue(0); // seq_parameter_set_id
  w.bit(0); // entropy_coding_mode_flag: CAVLC
  w.bit(0); // bottom_field_pic_order_in_frame_present_flag
  w.ue(0); // num_slice_groups_minus1
  w.ue(0); // num_ref_idx_l0_default_active_minus1
  w.ue(0); // num_ref_idx_l1_default_active_minus1
  w.bit(0); // weighted_pred_flag
  w.bits(0, 2); // weighted_bipred_idc
  w.se(0); // pic_init_qp_minus26
  w.se(0); // pic_init_qs_minus26
  w.se(0); // chroma_qp_index_offset
  w.bit(1); // deblocking_filter_control_present_flag
  w.bit(0); // constrained_intra_pred_flag
  w.bit(0); // redundant_pic_cnt_present_flag
  return nalUnit(3, 8, w.trailing());
}

/** A colour as 8-bit studio-range Y, Cb, Cr (BT.601). */
export function ycbcr(rgb: readonly [number, number, number]): [number, number, number] {
  const [r, g, b] = rgb;
  const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Math.round(v)));
  return [
    clamp(16 + 0.257 * r + 0.504 * g + 0.098 * b, 16, 235),
    clamp(128 - 0.148 * r - 0.291 * g + 0.439 * b, 16, 240),
    clamp(128 + 0.439 * r - 0.368 * g - 0.071 * b, 16, 240),
  ];
}

/**
 * One IDR picture of one colour: a single I slice of I_PCM macroblocks. Consecutive IDR pictures
 * must carry different `idrPicId`s; alternating 0 and 1 is enough.
 */
export function idrPicture(
  width: number,
  height: number,
  rgb: readonly [number, number, number],
  idrPicId: number,
): Buffer {
  const g = geometry(width, height);
  const [y, cb, cr] = ycbcr(rgb);
  const w = new BitWriter();
  w.ue(0); // first_mb_in_slice
  w.ue(7); // slice_type: I, and every slice of the picture is I
  w.ue(0); // pic_parameter_set_id
  w.bits(0, 4); // frame_num (log2_max_frame_num = 4)
  w.ue(idrPicId);
  w.bit(0); // no_output_of_prior_pics_flag
  w.bit(0); // long_term_reference_flag
  w.se(0); // slice_qp_delta
  w.ue(1); // disable_deblocking_filter_idc: off
  for (let mb = 0; mb < g.mbWidth * g.mbHeight; mb++) {
    w.ue(25); // mb_type I_PCM
    w.alignWithZeros(); // pcm_alignment_zero_bit
    for (let i = 0; i < 256; i++) w.byte(y);
    for (let i = 0; i < 64; i++) w.byte(cb);
    for (let i = 0; i < 64; i++) w.byte(cr);
  }
  return nalUnit(3, 5, w.trailing());
}
