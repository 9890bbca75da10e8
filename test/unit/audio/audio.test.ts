import { describe, expect, it } from 'vitest';
import { floatToPcm16, pcmBytes } from '../../../model/audio/pcm.ts';
import { PcmEncoder, WAV_HEADER_BYTES, WavEncoder, wavFile, wavHeader } from '../../../model/audio/wav.ts';
import { codePointLength } from '../../../protocol/request.ts';

describe('floatToPcm16', () => {
  const cases = new Map<number, number>([
    [0, 0],
    [1, 32767],
    [-1, -32767],
    [-0.5, -16383],
    [0.25, 8192],
    [0.5, 16384],
    [2, 32767], // clipped
    [-3, -32768], // clipped
    [NaN, 0],
  ]);
  for (const [input, expected] of cases) {
    it(`${input} → ${expected}`, () => expect(floatToPcm16(Float32Array.of(input))[0]).toBe(expected));
  }
  it('writes two bytes per sample, little-endian', () => {
    const b = pcmBytes(floatToPcm16(Float32Array.of(0, 1, -1)));
    expect(b.length).toBe(6);
    expect([...b.subarray(2, 4)]).toEqual([0xff, 0x7f]);
  });
});

describe('WAV', () => {
  it('has real sizes when the length is known: 44 + 2n bytes', () => {
    const n = 1000;
    const file = Buffer.concat([wavHeader(2 * n), pcmBytes(new Int16Array(n))]);
    expect(file.length).toBe(WAV_HEADER_BYTES + 2 * n);
    expect(file.toString('ascii', 0, 4)).toBe('RIFF');
    expect(file.readUInt32LE(4)).toBe(36 + 2 * n);
    expect(file.toString('ascii', 8, 16)).toBe('WAVEfmt ');
    expect(file.readUInt16LE(22)).toBe(1);
    expect(file.readUInt32LE(24)).toBe(24000);
    expect(file.readUInt16LE(34)).toBe(16);
    expect(file.readUInt32LE(40)).toBe(2 * n);
  });

  it('streams with placeholder sizes and the header only in front of the first chunk', async () => {
    const enc = new WavEncoder(24000);
    const first = Buffer.from(await enc.push(new Int16Array(10)));
    const second = await enc.push(new Int16Array(10));
    expect(first.length).toBe(44 + 20);
    expect(first.readUInt32LE(4)).toBe(0xffffffff);
    expect(first.readUInt32LE(40)).toBe(0xffffffff);
    expect(second.length).toBe(20);
    expect(wavHeader(undefined).equals(first.subarray(0, 44))).toBe(true);
    expect((await enc.end()).length).toBe(0);
  });

  it('gives a header-only file when there is no audio at all', async () => {
    expect((await new WavEncoder(16000).end()).length).toBe(44);
  });

  it('pcm has no header', async () => {
    const enc = new PcmEncoder();
    expect((await enc.push(new Int16Array(3))).length).toBe(6);
  });
});

describe('WAV header with real sizes, and whole files', () => {
  it('is 44 bytes with correct RIFF and data sizes for n samples', () => {
    const samples = 1234;
    const header = wavHeader(samples * 2);
    expect(header.length).toBe(44);
    expect(header.toString('ascii', 0, 4)).toBe('RIFF');
    expect(header.readUInt32LE(4)).toBe(36 + samples * 2);
    expect(header.toString('ascii', 8, 12)).toBe('WAVE');
    expect(header.toString('ascii', 12, 16)).toBe('fmt ');
    expect(header.readUInt32LE(16)).toBe(16);
    expect(header.readUInt16LE(20)).toBe(1); // PCM
    expect(header.readUInt16LE(22)).toBe(1); // mono
    expect(header.readUInt32LE(24)).toBe(24_000);
    expect(header.readUInt32LE(28)).toBe(48_000); // byte rate
    expect(header.readUInt16LE(32)).toBe(2); // block align
    expect(header.readUInt16LE(34)).toBe(16);
    expect(header.toString('ascii', 36, 40)).toBe('data');
    expect(header.readUInt32LE(40)).toBe(samples * 2);
  });

  it('handles empty data and rejects half samples', () => {
    expect(wavHeader(0).readUInt32LE(4)).toBe(36);
    expect(() => wavHeader(3)).toThrow(RangeError);
    expect(() => wavHeader(-2)).toThrow(RangeError);
  });

  it('wraps PCM into a whole file and drops a trailing odd byte', () => {
    const wav = wavFile(Buffer.from([1, 2, 3, 4, 5]));
    expect(wav.length).toBe(44 + 4);
    expect(wav.readUInt32LE(40)).toBe(4);
    expect([...wav.subarray(44)]).toEqual([1, 2, 3, 4]);
  });
});

describe('text length', () => {
  it('counts code points, as the contract does', () => {
    expect(codePointLength('héllo 👋')).toBe(7);
    expect(codePointLength('')).toBe(0);
    expect(codePointLength('\ud83d')).toBe(1); // a lone surrogate is one code point
  });
});
