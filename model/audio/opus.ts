/**
 * Ogg Opus (RFC 7845) streaming encoder on libopus 1.4 (opusscript, WebAssembly).
 *
 * - 20 ms frames; samples that do not fill a frame wait for the next push.
 * - Every push that completes at least one frame returns one Ogg page (more only past 255 lacing
 *   values) with all of its packets: short pages keep latency at one frame, where a muxer's usual
 *   one-second pages would hold a second of audio back.
 * - The first call returns the OpusHead and OpusTags pages (each on its own page, as RFC 7845
 *   requires), so a player can set up its decoder before the first audio arrives.
 * - `end()` pads with silence until the encoder has given out every real sample (its lookahead
 *   included) and sets the last granule position to pre-skip + real samples, so that decoders trim
 *   the padding.
 */
import { randomBytes } from 'node:crypto';
import OpusScript from 'opusscript';
import { concatBytes } from '../../protocol/bytes.ts';
import { OggWriter } from './ogg.ts';
import type { EncoderOptions, StreamEncoder } from './encoder.ts';

/** Input rates libopus encodes natively. */
export const OPUS_SAMPLE_RATES = [8000, 12000, 16000, 24000, 48000] as const;
export type OpusSampleRate = (typeof OPUS_SAMPLE_RATES)[number];

/**
 * Default bitrate: 32 kbit/s VBR, mono. Enough for libopus to code speech at the full band the
 * input rate allows (it switches to fullband from about 14 kbit/s mono), and a twelfth of 24 kHz
 * PCM16's 384 kbit/s. Below 24 kHz input the encoder tends to spend less than the target.
 */
export const OPUS_DEFAULT_BITRATE = 32_000;

/** Frame length. 20 ms is Opus's sweet spot: longer frames save little, shorter ones cost bits. */
export const OPUS_FRAME_MS = 20;

/** Ogg Opus granule positions count samples at 48 kHz whatever the input rate. */
const GRANULE_RATE = 48_000;
/** libopus lookahead at 48 kHz (2.5 ms + 4 ms delay compensation), used if the query fails. */
const DEFAULT_LOOKAHEAD_48K = 312;
const VENDOR = 'libopus 1.4';

// opus_defines.h
const OPUS_SET_BITRATE = 4002;
const OPUS_SET_SIGNAL = 4024;
const OPUS_GET_LOOKAHEAD = 4027;
const OPUS_SIGNAL_VOICE = 3001;

/**
 * Fields of an opusscript 0.1.1 instance that its typings do not declare. Its `encode` copies the
 * input into `inPCM`, which is a HEAPU16 view taken at the *byte* address of its buffer, i.e. at
 * twice that address: outside the instance's own allocation, on memory that the allocator hands
 * to other instances (encoder states, heap metadata). With several encoders alive at once this
 * corrupts them. We point `inPCM` back at the buffer the instance allocated, and refresh the views
 * when the shared wasm memory grows (growth detaches them; opusscript never refreshes them).
 */
interface OpusScriptInternals {
  inPCM: Uint16Array;
  inPCMPointer: number;
  inPCMLength: number;
  outOpus: Uint8Array;
  outOpusPointer: number;
  outPCM: Uint16Array;
}

function internals(opus: OpusScript): OpusScriptInternals {
  const o = opus as unknown as Partial<OpusScriptInternals>;
  if (
    !(o.inPCM instanceof Uint16Array) ||
    !(o.outOpus instanceof Uint8Array) ||
    !(o.outPCM instanceof Uint16Array) ||
    typeof o.inPCMPointer !== 'number' ||
    typeof o.inPCMLength !== 'number' ||
    typeof o.outOpusPointer !== 'number'
  ) {
    throw new Error(
      'opusscript internals are not as expected (version change?): cannot patch its input buffer',
    );
  }
  return o as OpusScriptInternals;
}

/** The current buffer of opusscript's wasm memory, taken from a fresh instance's last view. */
function currentHeap(): ArrayBufferLike {
  const probe = new OpusScript(48000, 1, OpusScript.Application.AUDIO);
  try {
    return internals(probe).outPCM.buffer;
  } finally {
    probe.delete();
  }
}

/** Points the instance's views at its own allocations on the current wasm memory. */
function fixViews(o: OpusScriptInternals, heap: ArrayBufferLike = o.outPCM.buffer): void {
  // `encode` stores each input *byte* in a 16-bit slot (the C side reassembles the samples).
  o.inPCM = new Uint16Array(heap, o.inPCMPointer, o.inPCMLength / 2);
  // Not `o.outOpus.length`: a detached view's length is 0.
  o.outOpus = new Uint8Array(heap, o.outOpusPointer, OpusScript.MAX_PACKET_SIZE);
}

function isOpusRate(rate: number): rate is OpusSampleRate {
  return (OPUS_SAMPLE_RATES as readonly number[]).includes(rate);
}

/**
 * Streaming Ogg Opus encoder for mono PCM16. See the module comment for the page policy.
 */
export class OpusEncoder implements StreamEncoder {
  /** Input (and OpusHead "input sample rate") rate in Hz. */
  readonly sampleRate: OpusSampleRate;
  /** Target bitrate in bits per second (libopus clamps it to its own range). */
  readonly bitrate: number;
  /** Samples per 20 ms frame at `sampleRate`. */
  readonly frameSize: number;
  /** Pre-skip written in OpusHead, in 48 kHz samples: the encoder's lookahead. */
  readonly preSkip: number;

  private opus: OpusScript | undefined;
  private readonly native: OpusScriptInternals;
  private readonly ogg = new OggWriter(randomBytes(4).readUInt32LE(0));
  /** 48 kHz samples per input sample. */
  private readonly scale: number;
  /** Lookahead at the input rate. */
  private readonly lookahead: number;
  private readonly pending: Int16Array;
  private pendingLength = 0;
  private headersSent = false;
  private packetCount = 0;
  private samplesIn = 0;
  private done = false;

  /**
   * @param options.sampleRate one of {@link OPUS_SAMPLE_RATES}
   * @param options.bitrate bits per second, default {@link OPUS_DEFAULT_BITRATE}
   */
  constructor(options: EncoderOptions) {
    const { sampleRate, bitrate = OPUS_DEFAULT_BITRATE } = options;
    if (!isOpusRate(sampleRate)) {
      throw new RangeError(`Opus encodes at ${OPUS_SAMPLE_RATES.join(', ')} Hz, not ${sampleRate}`);
    }
    if (!Number.isFinite(bitrate) || bitrate <= 0) throw new RangeError(`invalid Opus bitrate ${bitrate}`);
    this.sampleRate = sampleRate;
    this.bitrate = Math.round(bitrate);
    this.frameSize = (sampleRate * OPUS_FRAME_MS) / 1000;
    this.scale = GRANULE_RATE / sampleRate;
    this.pending = new Int16Array(this.frameSize);

    // AUDIO rather than VOIP: VOIP high-passes and trades fidelity for intelligibility at low
    // rates; the voice hint still steers mode decisions towards speech.
    const opus = new OpusScript(sampleRate, 1, OpusScript.Application.AUDIO);
    try {
      this.native = internals(opus);
      fixViews(this.native);
      opus.encoderCTL(OPUS_SET_BITRATE, this.bitrate);
      opus.encoderCTL(OPUS_SET_SIGNAL, OPUS_SIGNAL_VOICE);
      this.lookahead = this.queryLookahead(opus);
    } catch (err) {
      opus.delete();
      throw err;
    }
    this.opus = opus;
    this.preSkip = this.lookahead * this.scale;
  }

  /** OPUS_GET_LOOKAHEAD writes an int32 through a pointer: use the instance's output buffer. */
  private queryLookahead(opus: OpusScript): number {
    try {
      opus.encoderCTL(OPUS_GET_LOOKAHEAD, this.native.outOpusPointer);
      const o = this.native.outOpus;
      const value = new DataView(o.buffer, o.byteOffset, 4).getInt32(0, true);
      if (value > 0 && value < this.sampleRate / 10) return value;
    } catch {
      // fall through to the documented value
    }
    return DEFAULT_LOOKAHEAD_48K / (GRANULE_RATE / this.sampleRate);
  }

  async push(pcm: Int16Array): Promise<Uint8Array> {
    const opus = this.live();
    const out: Uint8Array[] = [];
    if (!this.headersSent) out.push(this.headers());
    const packets: Uint8Array[] = [];
    this.samplesIn += pcm.length;
    let i = 0;
    if (this.pendingLength > 0) {
      const take = Math.min(pcm.length, this.frameSize - this.pendingLength);
      this.pending.set(pcm.subarray(0, take), this.pendingLength);
      this.pendingLength += take;
      i = take;
      if (this.pendingLength === this.frameSize) {
        packets.push(this.encodeFrame(opus, this.pending));
        this.pendingLength = 0;
      }
    }
    for (; i + this.frameSize <= pcm.length; i += this.frameSize) {
      packets.push(this.encodeFrame(opus, pcm.subarray(i, i + this.frameSize)));
    }
    if (i < pcm.length) {
      this.pending.set(pcm.subarray(i), 0);
      this.pendingLength = pcm.length - i;
    }
    if (packets.length > 0) out.push(this.audioPages(packets, false));
    return concatBytes(out);
  }

  async end(): Promise<Uint8Array> {
    const opus = this.live();
    const out: Uint8Array[] = [];
    if (!this.headersSent) out.push(this.headers());
    // Enough frames to cover every real sample *after* the lookahead delay; at least one, since
    // the lookahead is never zero.
    const needed = Math.ceil((this.samplesIn + this.lookahead) / this.frameSize);
    const packets: Uint8Array[] = [];
    while (this.packetCount + packets.length < needed) {
      this.pending.fill(0, this.pendingLength);
      this.pendingLength = 0;
      packets.push(this.encodeFrame(opus, this.pending));
    }
    out.push(this.audioPages(packets, true));
    this.abort();
    this.done = true;
    return concatBytes(out);
  }

  abort(): void {
    this.opus?.delete();
    this.opus = undefined;
  }

  private live(): OpusScript {
    if (this.done) throw new Error('Opus encoder already ended');
    if (!this.opus) throw new Error('Opus encoder aborted');
    return this.opus;
  }

  private encodeFrame(opus: OpusScript, frame: Int16Array): Uint8Array {
    // Growth of the shared wasm memory (many encoders alive) detaches the views.
    if (this.native.inPCM.length === 0) fixViews(this.native, currentHeap());
    // Little-endian bytes, which is what opusscript's encode expects (and Int16Array holds on x64/arm64).
    const bytes = Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
    return opus.encode(bytes, this.frameSize);
  }

  /** OpusHead and OpusTags, each on its own page (RFC 7845 §3). */
  private headers(): Uint8Array {
    this.headersSent = true;
    const head = Buffer.alloc(19);
    head.write('OpusHead', 0, 'ascii');
    head[8] = 1; // version
    head[9] = 1; // channels
    head.writeUInt16LE(this.preSkip, 10);
    head.writeUInt32LE(this.sampleRate, 12); // input rate, informational
    head.writeInt16LE(0, 16); // output gain
    head[18] = 0; // mapping family 0: mono/stereo, no table
    const vendor = Buffer.from(VENDOR, 'utf8');
    const tags = Buffer.alloc(8 + 4 + vendor.length + 4);
    tags.write('OpusTags', 0, 'ascii');
    tags.writeUInt32LE(vendor.length, 8);
    vendor.copy(tags, 12);
    tags.writeUInt32LE(0, 12 + vendor.length); // no user comments
    return concatBytes([
      this.ogg.page([head], { granulePosition: 0n, bos: true }),
      this.ogg.page([tags], { granulePosition: 0n }),
    ]);
  }

  /**
   * Pages for packets just encoded. Granule positions count decoded 48 kHz samples (pre-skip
   * included); the last page of the stream instead says pre-skip + real samples, which is what
   * makes decoders drop the silence padding (end trimming, RFC 7845 §4.5).
   */
  private audioPages(packets: Uint8Array[], eos: boolean): Uint8Array {
    const perPacket = BigInt(this.frameSize * this.scale);
    const first = BigInt(this.packetCount);
    const granules = packets.map((_, k) => (first + BigInt(k + 1)) * perPacket);
    this.packetCount += packets.length;
    const granulePosition = eos ? BigInt(this.preSkip + this.samplesIn * this.scale) : granules.at(-1)!;
    return this.ogg.page(packets, { granulePosition, packetGranules: granules, eos });
  }
}
