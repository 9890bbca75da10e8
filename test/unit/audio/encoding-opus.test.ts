/**
 * The Ogg writer and the Ogg Opus stream encoder, checked against Debian's ffmpeg/ffprobe and
 * against an Ogg reader written here (not the one in model/): whole pages per chunk, CRCs,
 * headers, granule positions, durations and waveform similarity.
 */
import { describe, expect, it } from 'vitest';
import { FFMPEG } from '../../server/audio-tools.ts';
import { OggWriter, oggCrc32 } from '../../../model/audio/ogg.ts';
import { OPUS_SAMPLE_RATES, OpusEncoder } from '../../../model/audio/opus.ts';
import { rng, testSignal, pushRandomly, joined, bestCorrelation, decode, probe } from './encoding-harness.ts';

// ---------------------------------------------------------------------------------------------
// Independent Ogg reader

/** Bit-by-bit Ogg CRC (poly 0x04C11DB7, MSB first, init 0, no final XOR). */
function slowCrc(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 24;
    for (let k = 0; k < 8; k++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
  }
  return crc >>> 0;
}

interface Page {
  readonly flags: number;
  readonly granule: bigint;
  readonly serial: number;
  readonly sequence: number;
  readonly lacing: number[];
  readonly body: Buffer;
  readonly length: number;
}

/** Splits bytes into pages, checking capture pattern, version and CRC; must end exactly on a page. */
function readPages(bytes: Uint8Array): Page[] {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const pages: Page[] = [];
  let at = 0;
  while (at < buf.length) {
    expect(buf.length - at).toBeGreaterThanOrEqual(27);
    expect(buf.toString('latin1', at, at + 4)).toBe('OggS');
    expect(buf[at + 4]).toBe(0);
    const count = buf[at + 26]!;
    const lacing = [...buf.subarray(at + 27, at + 27 + count)];
    const bodyLength = lacing.reduce((a, b) => a + b, 0);
    const length = 27 + count + bodyLength;
    expect(at + length).toBeLessThanOrEqual(buf.length);
    const page = Buffer.from(buf.subarray(at, at + length));
    const crc = page.readUInt32LE(22);
    page.writeUInt32LE(0, 22);
    expect(slowCrc(page)).toBe(crc);
    pages.push({
      flags: buf[at + 5]!,
      granule: buf.readBigInt64LE(at + 6),
      serial: buf.readUInt32LE(at + 14),
      sequence: buf.readUInt32LE(at + 18),
      lacing,
      body: Buffer.from(buf.subarray(at + 27 + count, at + length)),
      length,
    });
    at += length;
  }
  expect(at).toBe(buf.length);
  return pages;
}

/** Packets of consecutive pages, with the index of the page each ends on. */
function readPackets(pages: readonly Page[]): { data: Buffer; page: number }[] {
  const packets: { data: Buffer; page: number }[] = [];
  let partial: Buffer[] = [];
  pages.forEach((page, index) => {
    expect((page.flags & 1) !== 0).toBe(partial.length > 0);
    let at = 0;
    for (const value of page.lacing) {
      partial.push(page.body.subarray(at, at + value));
      at += value;
      if (value < 255) {
        packets.push({ data: Buffer.concat(partial), page: index });
        partial = [];
      }
    }
  });
  expect(partial).toEqual([]);
  return packets;
}

// ---------------------------------------------------------------------------------------------

describe('OggWriter', () => {
  it('computes the Ogg CRC-32 (CRC-32/POSIX without the final inversion)', () => {
    expect(oggCrc32(Buffer.from('123456789'))).toBe(0x89a1897f); // CRC-32/POSIX check 0x765e7680, not inverted
    const random = rng(3);
    const bytes = Uint8Array.from({ length: 1000 }, () => Math.floor(random() * 256));
    expect(oggCrc32(bytes)).toBe(slowCrc(bytes));
  });

  it('laces a 255-byte packet as 255, 0', () => {
    const w = new OggWriter(0x01020304);
    const packet = new Uint8Array(255).fill(7);
    const bytes = w.page([packet], { granulePosition: 960n, bos: true });
    const [page] = readPages(bytes);
    expect(bytes.length).toBe(27 + 2 + 255);
    expect(page!.lacing).toEqual([255, 0]);
    expect(page!.flags).toBe(0x02);
    expect(page!.granule).toBe(960n);
    expect(page!.serial).toBe(0x01020304);
    expect(page!.sequence).toBe(0);
    expect(readPackets([page!]).map((p) => p.data)).toEqual([Buffer.from(packet)]);
  });

  it('splits a 70,000-byte packet over two pages with the continuation flag', () => {
    const w = new OggWriter(42);
    w.page([new Uint8Array(3)], { granulePosition: 0n, bos: true });
    const random = rng(5);
    const packet = Uint8Array.from({ length: 70_000 }, () => Math.floor(random() * 256));
    const pages = readPages(w.page([packet], { granulePosition: 1234n, eos: true }));
    expect(pages.map((p) => p.lacing.length)).toEqual([255, 20]); // ⌊70000/255⌋ = 274 full + 130
    expect(pages.map((p) => p.sequence)).toEqual([1, 2]);
    expect(pages.map((p) => p.flags)).toEqual([0x00, 0x01 | 0x04]);
    expect(pages.map((p) => p.granule)).toEqual([-1n, 1234n]); // no packet ends on the first page
    expect(pages[1]!.lacing.at(-1)).toBe(70_000 - 274 * 255);
    expect(readPackets(pages)[0]!.data.equals(packet)).toBe(true);
    expect(w.pageCount).toBe(3);
  });

  it('continues a 255·255-byte packet with a bare 0 on the next page', () => {
    const w = new OggWriter(1);
    const pages = readPages(w.page([new Uint8Array(255 * 255).fill(1)], { granulePosition: 5n }));
    expect(pages.map((p) => p.lacing.length)).toEqual([255, 1]);
    expect(pages[1]!.lacing).toEqual([0]);
    expect(pages[1]!.flags).toBe(0x01);
    expect(pages[1]!.body.length).toBe(0);
    expect(readPackets(pages)[0]!.data.length).toBe(255 * 255);
  });

  it('gives each page the granule of its last completed packet', () => {
    const w = new OggWriter(9);
    const packets = [new Uint8Array(255), new Uint8Array(70_000), new Uint8Array(0)];
    // Without per-packet positions the first page's position is unknown: refused, nothing written.
    expect(() => w.page(packets, { granulePosition: 30n })).toThrow(RangeError);
    expect(w.pageCount).toBe(0);
    const pages = readPages(w.page(packets, { granulePosition: 30n, packetGranules: [10n, 20n, 30n] }));
    expect(pages.map((p) => p.granule)).toEqual([10n, 30n]);
    expect(pages.map((p) => p.sequence)).toEqual([0, 1]);
    expect(readPackets(pages).map((p) => [p.data.length, p.page])).toEqual([
      [255, 0],
      [70_000, 1],
      [0, 1],
    ]);
  });

  it('writes an empty page for no packets', () => {
    const pages = readPages(new OggWriter(2).page([], { granulePosition: -1n, eos: true }));
    expect(pages).toHaveLength(1);
    expect(pages[0]!.lacing).toEqual([]);
    expect(pages[0]!.flags).toBe(0x04);
  });
});

describe.skipIf(!FFMPEG.available)(`OpusEncoder (Ogg Opus)${FFMPEG.note}`, () => {
  it('rejects rates Opus does not encode at', () => {
    expect(() => new OpusEncoder({ sampleRate: 22050 })).toThrow(RangeError);
    expect(() => new OpusEncoder({ sampleRate: 44100 })).toThrow(RangeError);
  });

  for (const rate of OPUS_SAMPLE_RATES) {
    it(`${rate} Hz: whole pages per chunk, RFC 7845 headers and granules, decodes with ffmpeg`, async () => {
      const pcm = testSignal(rate, 2, rate);
      const encoder = new OpusEncoder({ sampleRate: rate });
      expect(encoder.preSkip).toBe(312); // libopus lookahead: 6.5 ms at any rate
      const frame = rate / 50;
      const { chunks, sizes } = await pushRandomly(encoder, pcm, rate, rate + 1);

      // Each chunk: whole pages, exactly; a push that completes a frame returns its page at once.
      const pagesPerChunk = chunks.map((c) => readPages(c));
      let buffered = 0;
      sizes.forEach((size, i) => {
        const frames = Math.floor((buffered + size) / frame);
        buffered = (buffered + size) % frame;
        const audioPages = pagesPerChunk[i]!.filter((p) => p.granule > 0n);
        expect(audioPages.length > 0, `push ${i}`).toBe(frames > 0);
      });
      expect(chunks.at(-1)!.length).toBeGreaterThan(0);

      // The first (non-empty) chunk holds OpusHead and OpusTags, each alone on its page.
      const firstChunk = pagesPerChunk.find((p) => p.length > 0)!;
      expect(firstChunk.length).toBeGreaterThanOrEqual(2);
      const all = pagesPerChunk.flat();
      const packets = readPackets(all);
      const [head, tags] = packets;
      expect(head!.page).toBe(0);
      expect(tags!.page).toBe(1);
      expect(packets.filter((p) => p.page <= 1)).toHaveLength(2);
      expect(all[0]!.lacing.length).toBe(1);
      expect(all[1]!.flags & 1).toBe(0);
      expect(all[2]!.flags & 1).toBe(0);
      expect(head!.data.toString('latin1', 0, 8)).toBe('OpusHead');
      expect(head!.data.length).toBe(19);
      expect(head!.data[8]).toBe(1); // version
      expect(head!.data[9]).toBe(1); // channels
      expect(head!.data.readUInt16LE(10)).toBe(encoder.preSkip);
      expect(head!.data.readUInt32LE(12)).toBe(rate);
      expect(head!.data.readInt16LE(16)).toBe(0);
      expect(head!.data[18]).toBe(0);
      expect(tags!.data.toString('latin1', 0, 8)).toBe('OpusTags');
      const vendorLength = tags!.data.readUInt32LE(8);
      expect(tags!.data.toString('utf8', 12, 12 + vendorLength)).toMatch(/^libopus/);
      expect(tags!.data.readUInt32LE(12 + vendorLength)).toBe(0);
      expect(tags!.data.length).toBe(16 + vendorLength);

      // Stream structure: one serial, consecutive sequence numbers, BOS first, EOS last.
      expect(new Set(all.map((p) => p.serial)).size).toBe(1);
      expect(all.map((p) => p.sequence)).toEqual(all.map((_, i) => i));
      expect(all.map((p) => (p.flags & 2) !== 0)).toEqual(all.map((_, i) => i === 0));
      expect(all.map((p) => (p.flags & 4) !== 0)).toEqual(all.map((_, i) => i === all.length - 1));
      expect(all[0]!.granule).toBe(0n);
      expect(all[1]!.granule).toBe(0n);

      // Granules: 960 per 20 ms packet so far; the last one trims the padding.
      const audio = packets.slice(2);
      all.slice(2, -1).forEach((page, k) => {
        const done = audio.filter((p) => p.page <= k + 2).length;
        expect(page.granule).toBe(BigInt(done * 960));
      });
      const last = all.at(-1)!.granule;
      expect(last).toBe(BigInt(encoder.preSkip + (pcm.length * 48000) / rate));
      expect(last).toBeLessThanOrEqual(BigInt(audio.length * 960));
      expect(last).toBeGreaterThan(BigInt((audio.length - 1) * 960));

      const file = joined(chunks);
      const [[stream], { run: decoded, pcm: out }] = await Promise.all([probe(file), decode(file, rate)]);
      expect(stream!.codec_name).toBe('opus');
      expect(stream!.channels).toBe(1);
      expect(stream!.sample_rate).toBe('48000'); // Opus always decodes at 48 kHz; the input rate is in OpusHead
      expect(decoded.code, decoded.stderr).toBe(0);
      expect(decoded.stderr).not.toMatch(/error|invalid/i);
      // Pre-skip and end trimming applied: the input's length (± resampler rounding).
      expect(Math.abs(out.length - pcm.length)).toBeLessThanOrEqual(frame);
      // And the same waveform, in time (pre-skip removes the encoder delay).
      const { lag, r } = bestCorrelation(pcm, out, 0, 8);
      expect(lag).toBeLessThanOrEqual(2);
      expect(r).toBeGreaterThan(0.8);
    });
  }

  it('a stream with no audio is still a valid (empty) Ogg Opus file', async () => {
    const encoder = new OpusEncoder({ sampleRate: 24000 });
    const file = await encoder.end();
    const pages = readPages(file);
    expect(pages).toHaveLength(3);
    expect(pages[2]!.granule).toBe(312n);
    const { run: decoded, pcm } = await decode(file, 24000);
    expect(decoded.code, decoded.stderr).toBe(0);
    expect(pcm.length).toBe(0);
  });

  it('abort frees the encoder; push/end afterwards throw; abort twice is fine', async () => {
    const encoder = new OpusEncoder({ sampleRate: 48000 });
    await encoder.push(new Int16Array(1000));
    encoder.abort();
    encoder.abort();
    await expect(encoder.push(new Int16Array(960))).rejects.toThrow();
    await expect(encoder.end()).rejects.toThrow();
  });

  /** The audio packets (hex) of a stream's chunks. */
  function audioPackets(parts: readonly Uint8Array[]): string[] {
    return readPackets(readPages(joined(parts)))
      .slice(2)
      .map((p) => p.data.toString('hex'));
  }

  async function opusPackets(encoder: OpusEncoder, pcm: Int16Array, step: number): Promise<string[]> {
    const parts: Uint8Array[] = [];
    for (let i = 0; i < pcm.length; i += step) parts.push(await encoder.push(pcm.subarray(i, i + step)));
    parts.push(await encoder.end());
    return audioPackets(parts);
  }

  it('many encoders alive at once, created and freed in any order, do not disturb each other', async () => {
    // opusscript's own encode() copies its input to twice the address of the instance's buffer:
    // onto other instances' memory, and past the end of the 16 MiB heap once the buffer lies above
    // 8 MiB (about 80 live encoders). Both are fixed in opus.ts.
    const pcm = testSignal(24000, 0.6, 7);
    const reference = await opusPackets(new OpusEncoder({ sampleRate: 24000 }), pcm, 480);
    const random = rng(11);
    const tone = testSignal(48000, 0.02, 8);
    const others = Array.from({ length: 100 }, () => new OpusEncoder({ sampleRate: 48000 }));
    for (let round = 0; round < 4; round++) {
      for (let k = 0; k < 8; k++) {
        if (random() < 0.5) others.splice(Math.floor(random() * others.length), 1)[0]!.abort();
        else others.push(new OpusEncoder({ sampleRate: 48000 }));
      }
      const busy = others.slice(-3);
      const encoder = new OpusEncoder({ sampleRate: 24000 });
      const parts: Uint8Array[] = [];
      for (let i = 0; i < pcm.length; i += 480) {
        for (const other of busy) await other.push(tone);
        parts.push(await encoder.push(pcm.subarray(i, i + 480)));
      }
      parts.push(await encoder.end());
      expect(audioPackets(parts)).toEqual(reference);
    }
    for (const other of others) other.abort();
  });

  it('keeps working when opusscript grows its shared wasm memory', async () => {
    const pcm = testSignal(16000, 1, 9);
    const reference = await opusPackets(new OpusEncoder({ sampleRate: 16000 }), pcm, 3200);
    const encoder = new OpusEncoder({ sampleRate: 16000 });
    const parts = [await encoder.push(pcm.subarray(0, 8000))];
    // ~100 KiB each: a few hundred overflow the initial 16 MiB and the memory grows.
    const crowd = Array.from({ length: 300 }, () => new OpusEncoder({ sampleRate: 48000 }));
    parts.push(await encoder.push(pcm.subarray(8000)));
    parts.push(await encoder.end());
    for (const other of crowd) other.abort();
    expect(audioPackets(parts)).toEqual(reference);
  });
});
