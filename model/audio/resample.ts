/**
 * Streaming band-limited sample-rate conversion for mono PCM16 (polyphase windowed sinc).
 *
 * Output sample n sits at input time t = n·in/out, so the output is time-aligned with the input
 * (the symmetric kernel is centred on t: no filter delay to compensate and no leading silence).
 * Each output sample is the input convolved with a Kaiser-windowed sinc evaluated at the fractional
 * offsets of t; for a ratio out/in = L/M (reduced) there are only L distinct offsets, so the kernel
 * is tabulated once per ratio as L phases of 2K taps.
 */

/** Stopband attenuation the Kaiser window is designed for (dB). */
const STOPBAND_DB = 70;
/** Passband edge and stopband edge as fractions of the lower of the two Nyquist frequencies. */
const PASSBAND_EDGE = 0.9;
const STOPBAND_EDGE = 1.0;
/**
 * Above this many phases (exotic ratios such as 24000→22051) the table is sampled at this many
 * fractional offsets and interpolated linearly instead of holding every phase.
 */
const MAX_PHASES = 1024;

interface PolyphaseFilter {
  /** Rows in `table`: L, or MAX_PHASES + 1 when interpolating. */
  readonly rows: number;
  /** Taps per row (2K). */
  readonly taps: number;
  /** K: a row covers input samples i-K+1 … i+K around t (i = floor(t)). */
  readonly half: number;
  /** Row r holds the kernel for the fractional offset r/L (or r/MAX_PHASES), taps oldest first. */
  readonly table: Float64Array;
  readonly interpolate: boolean;
}

const filters = new Map<string, PolyphaseFilter>();

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** Zeroth-order modified Bessel function of the first kind (power series; converges fast). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const q = (x * x) / 4;
  for (let k = 1; k < 200; k++) {
    term *= q / (k * k);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}

function filterFor(inputRate: number, outputRate: number, up: number, down: number): PolyphaseFilter {
  const key = `${up}/${down}`;
  const cached = filters.get(key);
  if (cached) return cached;

  // Frequencies in cycles per input sample. The lower Nyquist bounds both aliasing (downsampling)
  // and imaging (upsampling); the cutoff sits mid-way through the transition band.
  const nyquist = Math.min(inputRate, outputRate) / 2 / inputRate;
  const cutoff = ((PASSBAND_EDGE + STOPBAND_EDGE) / 2) * nyquist;
  const transition = (STOPBAND_EDGE - PASSBAND_EDGE) * nyquist;
  // Kaiser's design formulas for the window shape and length.
  const beta = 0.1102 * (STOPBAND_DB - 8.7);
  const length = (STOPBAND_DB - 7.95) / (14.36 * transition) + 1;
  const half = Math.ceil(length / 2);
  const taps = 2 * half;

  const interpolate = up > MAX_PHASES;
  const phases = interpolate ? MAX_PHASES : up;
  const rows = interpolate ? MAX_PHASES + 1 : up;
  const table = new Float64Array(rows * taps);
  const i0Beta = besselI0(beta);
  for (let r = 0; r < rows; r++) {
    const frac = r / phases;
    let sum = 0;
    for (let j = 0; j < taps; j++) {
      const d = frac + half - 1 - j; // t minus the tap's input index
      const x = d / half;
      const w = Math.abs(x) >= 1 ? 0 : besselI0(beta * Math.sqrt(1 - x * x)) / i0Beta;
      const a = 2 * cutoff * d;
      const sinc = a === 0 ? 1 : Math.sin(Math.PI * a) / (Math.PI * a);
      const h = 2 * cutoff * sinc * w;
      table[r * taps + j] = h;
      sum += h;
    }
    // Unity DC gain on every phase, so a constant input stays exactly constant.
    for (let j = 0; j < taps; j++) table[r * taps + j]! /= sum;
  }
  const filter: PolyphaseFilter = { rows, taps, half, table, interpolate };
  filters.set(key, filter);
  return filter;
}

/**
 * Streaming sample-rate converter for mono PCM16.
 *
 * Pushing a signal in any chunking yields exactly the same samples as pushing it whole; `end()`
 * flushes the tail, for ceil(inputLength × out / in) output samples in total. When both rates are
 * equal, `push` returns its input unchanged.
 *
 * The anti-aliasing/anti-imaging filter is flat (±0.003 dB) to 0.9 × the lower Nyquist frequency,
 * is 6 dB down at 0.95 × and attenuates by 70 dB from the lower Nyquist frequency on. That takes
 * 262 taps per output sample for 24 → 8 kHz, 132 for 16 kHz, 96 for 22.05 kHz and 88 for 44.1 and
 * 48 kHz.
 */
export class Resampler {
  private readonly up: number;
  private readonly down: number;
  private readonly filter: PolyphaseFilter | undefined;
  /** Input samples; buf[0] has absolute input index `base` (negative indices are the zero past). */
  private buf: Float64Array;
  private len: number;
  private base: number;
  private received = 0;
  /** Next output index, floor(n·M/L) and (n·M) mod L. */
  private n = 0;
  private i = 0;
  private phase = 0;
  private ended = false;

  /**
   * @param inputRate - sample rate of the pushed PCM in Hz (a positive integer)
   * @param outputRate - sample rate of the returned PCM in Hz (a positive integer)
   */
  constructor(
    readonly inputRate: number,
    readonly outputRate: number,
  ) {
    for (const rate of [inputRate, outputRate]) {
      if (!Number.isSafeInteger(rate) || rate <= 0) throw new RangeError(`bad sample rate: ${rate}`);
    }
    const g = gcd(inputRate, outputRate);
    this.up = outputRate / g;
    this.down = inputRate / g;
    if (this.up === this.down) {
      this.filter = undefined;
      this.buf = new Float64Array(0);
      this.len = this.base = 0;
      return;
    }
    this.filter = filterFor(inputRate, outputRate, this.up, this.down);
    // The K-1 samples before the first one are silence.
    this.len = this.filter.half - 1;
    this.base = -this.len;
    this.buf = new Float64Array(Math.max(4096, 2 * this.filter.taps));
  }

  /** Converts the next chunk; returns every output sample that the input so far determines. */
  push(pcm: Int16Array): Int16Array {
    if (this.ended) throw new Error('Resampler: push after end');
    const filter = this.filter;
    if (!filter) return pcm;
    this.append(pcm, pcm.length);
    this.received += pcm.length;
    // Output n needs input up to floor(n·M/L) + K.
    const lastUsable = this.received - 1 - filter.half;
    const stop = Math.ceil(((lastUsable + 1) * this.up) / this.down);
    return this.run(Math.max(0, stop - this.n));
  }

  /** Flushes the filter tail (the input is taken to be silent after its end). Call once. */
  end(): Int16Array {
    if (this.ended) throw new Error('Resampler: end called twice');
    this.ended = true;
    const filter = this.filter;
    if (!filter) return new Int16Array(0);
    this.append(undefined, filter.half);
    const total = Math.ceil((this.received * this.up) / this.down);
    return this.run(Math.max(0, total - this.n));
  }

  /** Appends samples (or `count` zeros), first dropping input that no future output needs. */
  private append(pcm: Int16Array | undefined, count: number): void {
    const filter = this.filter!;
    const drop = this.i - filter.half + 1 - this.base;
    if (drop > 0) {
      this.buf.copyWithin(0, drop, this.len);
      this.len -= drop;
      this.base += drop;
    }
    if (this.len + count > this.buf.length) {
      const bigger = new Float64Array(Math.max(2 * this.buf.length, this.len + count));
      bigger.set(this.buf.subarray(0, this.len));
      this.buf = bigger;
    }
    if (pcm) {
      const buf = this.buf;
      const at = this.len;
      for (let k = 0; k < count; k++) buf[at + k] = pcm[k]!;
    } else {
      this.buf.fill(0, this.len, this.len + count);
    }
    this.len += count;
  }

  private run(count: number): Int16Array {
    const out = new Int16Array(count);
    const { table, taps, half, interpolate, rows } = this.filter!;
    const buf = this.buf;
    const up = this.up;
    const stepInt = Math.floor(this.down / up);
    const stepFrac = this.down % up;
    const phases = rows - 1;
    let i = this.i;
    let phase = this.phase;
    const offset = 1 - half - this.base;
    for (let o = 0; o < count; o++) {
      const start = i + offset;
      let y: number;
      if (!interpolate) {
        const row = phase * taps;
        // Four independent sums keep the adder pipeline busy, where one chain waits on each add.
        let a0 = 0;
        let a1 = 0;
        let a2 = 0;
        let a3 = 0;
        let j = 0;
        for (; j + 3 < taps; j += 4) {
          const s = start + j;
          const c = row + j;
          a0 += buf[s]! * table[c]!;
          a1 += buf[s + 1]! * table[c + 1]!;
          a2 += buf[s + 2]! * table[c + 2]!;
          a3 += buf[s + 3]! * table[c + 3]!;
        }
        for (; j < taps; j++) a0 += buf[start + j]! * table[row + j]!;
        y = a0 + a1 + (a2 + a3);
      } else {
        const position = (phase * phases) / up;
        const r = Math.floor(position);
        const frac = position - r;
        const row0 = r * taps;
        const row1 = row0 + taps;
        let acc0 = 0;
        let acc1 = 0;
        for (let j = 0; j < taps; j++) {
          const x = buf[start + j]!;
          acc0 += x * table[row0 + j]!;
          acc1 += x * table[row1 + j]!;
        }
        y = acc0 + frac * (acc1 - acc0);
      }
      y = Math.round(y);
      out[o] = y > 32767 ? 32767 : y < -32768 ? -32768 : y;
      i += stepInt;
      phase += stepFrac;
      if (phase >= up) {
        phase -= up;
        i++;
      }
    }
    this.i = i;
    this.phase = phase;
    this.n += count;
    return out;
  }
}
