/**
 * Streaming FLAC encoder for mono 16-bit PCM.
 *
 * Layout: `fLaC`, one STREAMINFO block (marked last; total samples 0 = unknown, MD5 zero, both
 * allowed for streams), then independent frames of a fixed block size. Each subframe is CONSTANT,
 * VERBATIM or FIXED (orders 0–4, the cheapest per block) with partitioned Rice residuals (the
 * partition order and each partition's parameter chosen per block). Every push returns whole frames
 * only, so each returned chunk decodes on its own after the stream header.
 */
import type { EncoderOptions, StreamEncoder } from './encoder.ts';

/** Options of {@link FlacEncoder}. */
export interface FlacEncoderOptions extends EncoderOptions {
  /**
   * Samples per frame (16…65535). Default: 1152 (48 ms at 24 kHz, 24 ms at 48 kHz), or 576 at
   * 16 kHz and below (36 ms at 16 kHz, 72 ms at 8 kHz). A frame goes out only once full, so this
   * bounds how much audio is held back; smaller frames cost more header bytes and compress worse.
   */
  readonly blockSize?: number;
}

const MAX_FIXED_ORDER = 4;
/**
 * At most 2^6 Rice partitions, as in libFLAC's highest preset: finer ones multiply the search time
 * and gained nothing on speech.
 */
const MAX_PARTITION_ORDER = 6;
/** The largest Rice parameter the 4-bit form can carry (15 is the escape code). */
const MAX_RICE4 = 14;
const MAX_RICE5 = 30;

const CRC8 = new Uint8Array(256);
const CRC16 = new Uint16Array(256);
for (let i = 0; i < 256; i++) {
  let c8 = i;
  let c16 = i << 8;
  for (let b = 0; b < 8; b++) {
    c8 = c8 & 0x80 ? ((c8 << 1) ^ 0x07) & 0xff : (c8 << 1) & 0xff; // x^8 + x^2 + x + 1
    c16 = c16 & 0x8000 ? ((c16 << 1) ^ 0x8005) & 0xffff : (c16 << 1) & 0xffff; // x^16 + x^15 + x^2 + 1
  }
  CRC8[i] = c8;
  CRC16[i] = c16;
}

function crc8(bytes: Uint8Array, from: number, to: number): number {
  let crc = 0;
  for (let i = from; i < to; i++) crc = CRC8[crc ^ bytes[i]!]!;
  return crc;
}

function crc16(bytes: Uint8Array, from: number, to: number): number {
  let crc = 0;
  for (let i = from; i < to; i++) crc = ((crc << 8) & 0xffff) ^ CRC16[(crc >> 8) ^ bytes[i]!]!;
  return crc;
}

/** MSB-first bit writer into a growing byte buffer. */
class BitWriter {
  bytes = new Uint8Array(16384);
  pos = 0;
  private acc = 0;
  private count = 0; // bits pending in acc, always < 8 between calls

  /** Writes the low `n` bits of `value` (n ≤ 24; value already masked to n bits). */
  write(value: number, n: number): void {
    // count ≤ 7 and n ≤ 24, so acc stays below 2^31 and the int32 shifts are safe.
    let acc = (this.acc << n) | value;
    let count = this.count + n;
    if (this.pos + 4 > this.bytes.length) this.grow();
    while (count >= 8) {
      count -= 8;
      this.bytes[this.pos++] = (acc >>> count) & 0xff;
    }
    acc &= (1 << count) - 1;
    this.acc = acc;
    this.count = count;
  }

  /** Writes up to 32 bits. */
  writeLong(value: number, n: number): void {
    if (n > 24) {
      this.write(Math.floor(value / 0x10000) & ((1 << (n - 16)) - 1), n - 16);
      this.write(value & 0xffff, 16);
    } else {
      this.write(value & ((1 << n) - 1), n);
    }
  }

  /** Writes `n` zero bits followed by a one (unary code). */
  unary(n: number): void {
    while (n >= 24) {
      this.write(0, 24);
      n -= 24;
    }
    this.write(1, n + 1);
  }

  /** Pads with zero bits to the next byte boundary. */
  align(): void {
    if (this.count > 0) this.write(0, 8 - this.count);
  }

  byte(value: number): void {
    this.write(value & 0xff, 8);
  }

  private grow(): void {
    const bigger = new Uint8Array(this.bytes.length * 2);
    bigger.set(this.bytes.subarray(0, this.pos));
    this.bytes = bigger;
  }
}

const SAMPLE_RATE_CODES = new Map<number, number>([
  [88200, 1],
  [176400, 2],
  [192000, 3],
  [8000, 4],
  [16000, 5],
  [22050, 6],
  [24000, 7],
  [32000, 8],
  [44100, 9],
  [48000, 10],
  [96000, 11],
]);

/** The frame header's 4-bit sample-rate code and its trailing field, if any. */
function sampleRateCode(rate: number): { code: number; extra?: { value: number; bits: number } } {
  const code = SAMPLE_RATE_CODES.get(rate);
  if (code !== undefined) return { code };
  if (rate % 1000 === 0 && rate / 1000 <= 255) return { code: 12, extra: { value: rate / 1000, bits: 8 } };
  if (rate <= 65535) return { code: 13, extra: { value: rate, bits: 16 } };
  if (rate % 10 === 0 && rate / 10 <= 65535) return { code: 14, extra: { value: rate / 10, bits: 16 } };
  return { code: 0 }; // "see STREAMINFO"
}

/** The frame header's 4-bit block-size code and its trailing field, if any. */
function blockSizeCode(size: number): { code: number; extra?: { value: number; bits: number } } {
  if (size === 192) return { code: 1 };
  for (let k = 0; k < 4; k++) if (size === 576 << k) return { code: 2 + k };
  for (let k = 0; k < 8; k++) if (size === 256 << k) return { code: 8 + k };
  if (size <= 256) return { code: 6, extra: { value: size - 1, bits: 8 } };
  return { code: 7, extra: { value: size - 1, bits: 16 } };
}

/** The frame number in FLAC's UTF-8-like variable-length code. */
function writeFrameNumber(w: BitWriter, n: number): void {
  if (n < 0x80) {
    w.byte(n);
    return;
  }
  // Continuation bytes carry 6 bits each; the lead byte's unary prefix says how many follow.
  let tail = 1;
  while (tail < 6 && n >= 2 ** (6 * tail + 6 - tail)) tail++;
  const lead = (0xff00 >> (tail + 1)) & 0xff;
  w.byte(lead | Math.floor(n / 2 ** (6 * tail)));
  for (let k = tail - 1; k >= 0; k--) w.byte(0x80 | (Math.floor(n / 2 ** (6 * k)) & 0x3f));
}

interface RicePlan {
  /** Estimated residual size in bits, including the method and parameter fields. */
  bits: number;
  partitionOrder: number;
  params: Uint8Array;
  /** 1 when some parameter needs the 5-bit form (RICE2). */
  method: number;
}

/** 2^-k: multiplying by it is exact and much cheaper than `2 ** k` in the search below. */
const INV_POW2 = Float64Array.from({ length: MAX_RICE5 + 1 }, (_, k) => 2 ** -k);

/** Estimated size of `n` folded residuals summing to `sum`, Rice-coded with parameter k. */
function riceBits(n: number, sum: number, k: number): number {
  return n * (k + 1) + Math.floor(sum * INV_POW2[k]!);
}

/** The Rice parameter minimising {@link riceBits}: one of the neighbours of log2(mean). */
function riceParam(n: number, sum: number): number {
  if (n === 0 || sum < n) return 0;
  const guess = 31 - Math.clz32(Math.floor(sum / n)); // floor(log2(mean)); the mean is < 2^21
  let best = Math.max(0, guess - 1);
  for (let k = best + 1; k <= Math.min(MAX_RICE5, guess + 1); k++) {
    if (riceBits(n, sum, k) < riceBits(n, sum, best)) best = k;
  }
  return best;
}

/** Maps signed residuals to unsigned for Rice coding: 0, -1, 1, -2, … → 0, 1, 2, 3, … */
function fold(e: number): number {
  return e >= 0 ? 2 * e : -2 * e - 1;
}

/** Encodes mono 16-bit frames; reusable scratch buffers sized for one block. */
class FrameCoder {
  /** Folded (zigzag) residuals per fixed order, index = sample position in the block. */
  private readonly residuals: Uint32Array[] = [];
  private readonly sums = new Float64Array(1 << MAX_PARTITION_ORDER);
  private readonly params = new Uint8Array(1 << MAX_PARTITION_ORDER);
  private readonly rate: ReturnType<typeof sampleRateCode>;

  constructor(blockSize: number, sampleRate: number) {
    for (let o = 0; o <= MAX_FIXED_ORDER; o++) this.residuals.push(new Uint32Array(blockSize));
    this.rate = sampleRateCode(sampleRate);
  }

  /** Appends one whole frame holding `block` (1…blockSize samples) to `w`. */
  encode(w: BitWriter, block: Int16Array, frameNumber: number): void {
    const start = w.pos;
    const size = block.length;
    const bs = blockSizeCode(size);
    const sr = this.rate;
    w.byte(0xff);
    w.byte(0xf8); // sync 0b11111111111110, reserved 0, fixed block size
    w.byte((bs.code << 4) | sr.code);
    w.byte(0x08); // mono, 16 bits per sample, reserved 0
    writeFrameNumber(w, frameNumber);
    if (bs.extra) w.write(bs.extra.value, bs.extra.bits);
    if (sr.extra) w.write(sr.extra.value, sr.extra.bits);
    w.byte(crc8(w.bytes, start, w.pos));

    this.subframe(w, block);
    w.align();
    const crc = crc16(w.bytes, start, w.pos);
    w.byte(crc >> 8);
    w.byte(crc);
  }

  private subframe(w: BitWriter, x: Int16Array): void {
    const n = x.length;
    let constant = true;
    for (let i = 1; i < n && constant; i++) constant = x[i] === x[0];
    if (constant) {
      w.byte(0x00); // CONSTANT, no wasted bits
      w.write(x[0]! & 0xffff, 16);
      return;
    }

    let bestOrder = -1;
    let bestPlan: RicePlan | undefined;
    let bestBits = 16 * n; // VERBATIM
    const maxOrder = Math.min(MAX_FIXED_ORDER, n - 1);
    for (let order = 0; order <= maxOrder; order++) {
      this.computeResidual(x, order);
      const plan = this.planRice(order, n);
      const bits = 16 * order + plan.bits;
      if (bits < bestBits) {
        bestBits = bits;
        bestOrder = order;
        bestPlan = plan;
      }
    }

    // The plan's size is an estimate (sum/2^k undercounts by up to a bit per sample): confirm that
    // the Rice form really beats 16 bits per sample, which matters for noise.
    if (bestPlan && 16 * bestOrder + this.exactBits(bestOrder, n, bestPlan) >= 16 * n) bestPlan = undefined;
    if (!bestPlan) {
      w.byte(0x02); // VERBATIM
      for (let i = 0; i < n; i++) w.write(x[i]! & 0xffff, 16);
      return;
    }
    w.byte(0x10 | (bestOrder << 1)); // FIXED, order in the low 3 bits of the type
    for (let i = 0; i < bestOrder; i++) w.write(x[i]! & 0xffff, 16); // warm-up samples
    this.writeResidual(w, this.residuals[bestOrder]!, bestOrder, n, bestPlan);
  }

  /** Folded residual of the fixed polynomial predictor of `order` (exact in int32: |r| < 2^20). */
  private computeResidual(x: Int16Array, order: number): void {
    const r = this.residuals[order]!;
    const n = x.length;
    // One loop per order: a switch inside the loop would run once per sample.
    if (order === 0) {
      for (let i = 0; i < n; i++) r[i] = fold(x[i]!);
    } else if (order === 1) {
      for (let i = 1; i < n; i++) r[i] = fold(x[i]! - x[i - 1]!);
    } else if (order === 2) {
      for (let i = 2; i < n; i++) r[i] = fold(x[i]! - 2 * x[i - 1]! + x[i - 2]!);
    } else if (order === 3) {
      for (let i = 3; i < n; i++) r[i] = fold(x[i]! - 3 * x[i - 1]! + 3 * x[i - 2]! - x[i - 3]!);
    } else {
      for (let i = 4; i < n; i++)
        r[i] = fold(x[i]! - 4 * x[i - 1]! + 6 * x[i - 2]! - 4 * x[i - 3]! + x[i - 4]!);
    }
  }

  /** Chooses the partition order and per-partition parameters with the smallest estimated size. */
  private planRice(order: number, n: number): RicePlan {
    // Partition p holds n >> po samples; the first one loses the `order` warm-up samples.
    let maxPo = 0;
    while (maxPo < MAX_PARTITION_ORDER && n % (1 << (maxPo + 1)) === 0 && n >> (maxPo + 1) > order) {
      maxPo++;
    }
    const r = this.residuals[order]!;
    const sums = this.sums;
    const parts = 1 << maxPo;
    const len = n >> maxPo;
    for (let p = 0; p < parts; p++) {
      let s = 0;
      for (let i = p === 0 ? order : p * len, end = (p + 1) * len; i < end; i++) s += r[i]!;
      sums[p] = s;
    }

    let best: RicePlan | undefined;
    const params = this.params;
    for (let po = maxPo; po >= 0; po--) {
      const count = 1 << po;
      const partLen = n >> po;
      let bits = 0;
      let method = 0;
      for (let p = 0; p < count; p++) {
        const size = p === 0 ? partLen - order : partLen;
        const k = riceParam(size, sums[p]!);
        params[p] = k;
        bits += riceBits(size, sums[p]!, k);
        if (k > MAX_RICE4) method = 1;
      }
      bits += 6 + count * (method ? 5 : 4); // method + partition order + parameters
      if (!best || bits < best.bits) {
        best = { bits, partitionOrder: po, params: params.slice(0, count), method };
      }
      // Merge neighbouring partitions for the next (coarser) order.
      for (let p = 0; p < count / 2; p++) sums[p] = sums[2 * p]! + sums[2 * p + 1]!;
    }
    return best!;
  }

  private exactBits(order: number, n: number, plan: RicePlan): number {
    const r = this.residuals[order]!;
    const partLen = n >> plan.partitionOrder;
    let bits = 6 + plan.params.length * (plan.method ? 5 : 4);
    for (let p = 0; p < plan.params.length; p++) {
      const k = plan.params[p]!;
      const from = p === 0 ? order : p * partLen;
      const end = (p + 1) * partLen;
      bits += (end - from) * (k + 1);
      for (let i = from; i < end; i++) bits += r[i]! >>> k;
    }
    return bits;
  }

  private writeResidual(w: BitWriter, r: Uint32Array, order: number, n: number, plan: RicePlan): void {
    const paramBits = plan.method ? 5 : 4;
    w.write(plan.method, 2);
    w.write(plan.partitionOrder, 4);
    const partLen = n >> plan.partitionOrder;
    for (let p = 0; p < plan.params.length; p++) {
      const k = plan.params[p]!;
      w.write(k, paramBits);
      const mask = (1 << k) - 1;
      for (let i = p === 0 ? order : p * partLen, end = (p + 1) * partLen; i < end; i++) {
        const u = r[i]!;
        const q = u >>> k;
        if (q + k < 24) {
          w.write((1 << k) | (u & mask), q + 1 + k); // q zeros, a one, then k low bits
        } else {
          w.unary(q);
          if (k > 0) w.writeLong(u & mask, k);
        }
      }
    }
  }
}

/** `fLaC` + STREAMINFO (the only, so last, metadata block). */
function streamHeader(sampleRate: number, blockSize: number): Uint8Array {
  const w = new BitWriter();
  for (const c of 'fLaC') w.byte(c.charCodeAt(0));
  w.byte(0x80); // last metadata block, type 0 = STREAMINFO
  w.write(34, 24); // block length
  // Min = max block size: the shorter final block does not count for a fixed-blocksize stream.
  w.write(blockSize, 16);
  w.write(blockSize, 16);
  w.write(0, 24); // min frame size: unknown
  w.write(0, 24); // max frame size: unknown
  w.write(sampleRate, 20);
  w.write(0, 3); // channels - 1
  w.write(15, 5); // bits per sample - 1
  w.write(0, 4); // total samples (36 bits): 0 = unknown
  w.write(0, 16);
  w.write(0, 16);
  for (let i = 0; i < 16; i++) w.byte(0); // MD5 unknown
  return w.bytes.slice(0, w.pos);
}

/**
 * FLAC as a StreamEncoder: mono, 16-bit, fixed block size. The first non-empty output starts with
 * the stream header; every output holds whole frames only (a push that completes no block returns
 * an empty array), and `end()` emits the remaining samples as a final shorter frame.
 */
export class FlacEncoder implements StreamEncoder {
  readonly blockSize: number;
  private readonly sampleRate: number;
  private readonly coder: FrameCoder;
  private readonly pending: Int16Array;
  private filled = 0;
  private frameNumber = 0;
  private headerSent = false;
  private done = false;

  constructor(options: FlacEncoderOptions) {
    const { sampleRate } = options;
    if (!Number.isInteger(sampleRate) || sampleRate < 1 || sampleRate > 655350) {
      throw new RangeError(`FLAC cannot carry sample rate ${sampleRate}`);
    }
    const blockSize = options.blockSize ?? (sampleRate <= 16000 ? 576 : 1152);
    if (!Number.isInteger(blockSize) || blockSize < 16 || blockSize > 65535) {
      throw new RangeError(`bad FLAC block size ${blockSize}`);
    }
    this.sampleRate = sampleRate;
    this.blockSize = blockSize;
    this.coder = new FrameCoder(blockSize, sampleRate);
    this.pending = new Int16Array(blockSize);
  }

  push(pcm: Int16Array): Promise<Uint8Array> {
    return new Promise((resolve) => resolve(this.encode(pcm, false)));
  }

  end(): Promise<Uint8Array> {
    return new Promise((resolve) => resolve(this.encode(new Int16Array(0), true)));
  }

  abort(): void {
    this.done = true;
  }

  private encode(pcm: Int16Array, last: boolean): Uint8Array {
    if (this.done) {
      if (last) throw new Error('FlacEncoder: end called twice or after abort');
      throw new Error('FlacEncoder: push after end or abort');
    }
    const size = this.blockSize;
    let w: BitWriter | undefined;
    let at = 0;
    while (at < pcm.length) {
      // Whole blocks straight from the input; the rest collects in `pending`.
      if (this.filled === 0 && pcm.length - at >= size) {
        w ??= new BitWriter();
        this.coder.encode(w, pcm.subarray(at, at + size), this.frameNumber++);
        at += size;
        continue;
      }
      const take = Math.min(size - this.filled, pcm.length - at);
      this.pending.set(pcm.subarray(at, at + take), this.filled);
      this.filled += take;
      at += take;
      if (this.filled === size) {
        w ??= new BitWriter();
        this.coder.encode(w, this.pending, this.frameNumber++);
        this.filled = 0;
      }
    }
    if (last) {
      this.done = true;
      w ??= new BitWriter();
      if (this.filled > 0) this.coder.encode(w, this.pending.subarray(0, this.filled), this.frameNumber++);
      this.filled = 0;
    }
    if (!w) return new Uint8Array(0);
    const frames = w.bytes.subarray(0, w.pos);
    if (this.headerSent) return frames;
    // A stream with no samples at all is still a valid file: the header alone.
    this.headerSent = true;
    const header = streamHeader(this.sampleRate, this.blockSize);
    const out = new Uint8Array(header.length + frames.length);
    out.set(header);
    out.set(frames, header.length);
    return out;
  }
}
