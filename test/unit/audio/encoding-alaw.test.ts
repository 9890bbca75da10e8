/** A-law, encoded here and decoded by ffmpeg. */
import { describe, expect, it } from 'vitest';
import { FFMPEG } from '../../server/audio-tools.ts';
import { AlawEncoder, decodeAlaw, encodeAlaw } from '../../../model/audio/alaw.ts';
import { tone, expectSame, run, asInt16, FFMPEG_QUIET } from './pcm-signals.ts';

describe.skipIf(!FFMPEG.available)(`A-law${FFMPEG.note}`, () => {
  const everySample = new Int16Array(65536);
  for (let i = 0; i < 65536; i++) everySample[i] = i - 32768;
  const everyCode = Uint8Array.from({ length: 256 }, (_, i) => i);

  it('encodes the reference points of G.711', () => {
    expect([...encodeAlaw(Int16Array.of(0, -1, 32767, -32768, 7, -17))]).toEqual([
      0xd5, 0x55, 0xaa, 0x2a, 0xd5, 0x54,
    ]);
    expect([...decodeAlaw(Uint8Array.of(0xd5, 0x55, 0xaa, 0x2a))]).toEqual([8, -8, 32256, -32256]);
  });

  it('round-trips within half a quantisation step, monotonically', () => {
    const decoded = decodeAlaw(encodeAlaw(everySample));
    const tooFar: number[] = [];
    const notMonotonic: number[] = [];
    for (let i = 0; i < 65536; i++) {
      const x = everySample[i]!;
      // Steps are 16 below 512 and a sixteenth of the power of two below |x| above (the segments
      // double); the top level, 32256, is within half a step of full scale.
      const step = Math.max(16, 2 ** Math.floor(Math.log2(Math.max(1, Math.abs(x)))) / 16);
      if (Math.abs(decoded[i]! - x) > step / 2) tooFar.push(x);
      if (i > 0 && decoded[i]! < decoded[i - 1]!) notMonotonic.push(x);
    }
    expect(tooFar).toEqual([]);
    expect(notMonotonic).toEqual([]);
  });

  it('decodes like ffmpeg, and ffmpeg decodes our bytes to our values', () => {
    const args = [
      ...FFMPEG_QUIET,
      '-f',
      'alaw',
      '-ar',
      '8000',
      '-ch_layout',
      'mono',
      '-i',
      'pipe:0',
      '-f',
      's16le',
      'pipe:1',
    ];
    expectSame(asInt16(run('ffmpeg', args, everyCode)), decodeAlaw(everyCode));
    const ours = encodeAlaw(everySample);
    expectSame(asInt16(run('ffmpeg', args, ours)), decodeAlaw(ours));
  });

  it("agrees with ffmpeg's pcm_alaw encoder to within one level", () => {
    // ffmpeg rounds to the nearest level; the G.711 reference encoder truncates within a segment,
    // so inputs past a level's midpoint differ by one.
    const theirs = run(
      'ffmpeg',
      [
        ...FFMPEG_QUIET,
        '-f',
        's16le',
        '-ar',
        '8000',
        '-ch_layout',
        'mono',
        '-i',
        'pipe:0',
        '-c:a',
        'pcm_alaw',
        '-f',
        'alaw',
        'pipe:1',
      ],
      new Uint8Array(everySample.buffer),
    );
    const ours = encodeAlaw(everySample);
    expect(theirs.length).toBe(ours.length);
    const levels = (bytes: Uint8Array) => Array.from(decodeAlaw(bytes));
    const theirLevels = levels(theirs);
    const ourLevels = levels(ours);
    const sorted = [...new Set(levels(everyCode))].sort((a, b) => a - b);
    const apart: number[] = [];
    for (let i = 0; i < ours.length; i++) {
      const gap = Math.abs(sorted.indexOf(theirLevels[i]!) - sorted.indexOf(ourLevels[i]!));
      if (gap > 1) apart.push(everySample[i]!);
    }
    expect(apart).toEqual([]);
  });

  it('streams one byte per sample with no header', async () => {
    const enc = new AlawEncoder();
    const x = tone(1000, 160, 8000, 8000);
    expect(await enc.push(x)).toEqual(encodeAlaw(x));
    expect((await enc.push(new Int16Array(0))).length).toBe(0);
    expect((await enc.end()).length).toBe(0);
    enc.abort();
  });
});
