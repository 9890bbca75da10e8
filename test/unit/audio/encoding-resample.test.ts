/** The resampler: every rate, chunked as it streams, against the whole signal and ffmpeg. */
import { describe, expect, it } from 'vitest';
import { Resampler } from '../../../model/audio/resample.ts';
import {
  IN_RATE,
  rng,
  clip16,
  tone,
  concatInt16,
  randomChunks,
  resampleWhole,
  amplitudeAt,
  rms,
  expectSame,
  db,
} from './pcm-signals.ts';

describe('Resampler', () => {
  const rates = [8000, 16000, 22050, 44100, 48000];
  // Sweep 20 Hz → 11.5 kHz plus two steady tones and a little noise: every filter phase gets used.
  const n = 36_001;
  const random = rng(7);
  const signal = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    const t = i / IN_RATE;
    const sweep = 2 * Math.PI * (20 * t + ((11500 - 20) / (2 * (n / IN_RATE))) * t * t);
    signal[i] = clip16(
      9000 * Math.sin(sweep) +
        6000 * Math.sin(2 * Math.PI * 440 * t) +
        4000 * Math.sin(2 * Math.PI * 3100 * t) +
        500 * (random() - 0.5),
    );
  }

  for (const rate of [...rates, 22051]) {
    it(`24000 → ${rate}: chunked pushes give exactly the whole-signal output`, () => {
      const whole = resampleWhole(signal, rate);
      expect(Math.abs(whole.length - Math.round((n * rate) / IN_RATE))).toBeLessThanOrEqual(1);
      for (const seed of [1, 2]) {
        const r = new Resampler(IN_RATE, rate);
        const parts = randomChunks(n, 3000, rng(seed)).map(([a, b]) => r.push(signal.subarray(a, b)));
        parts.push(r.end());
        expectSame(concatInt16(parts), whole, `seed ${seed}`);
      }
    });

    it(`24000 → ${rate}: a 1 kHz tone keeps amplitude, frequency and timing`, () => {
      const amplitude = 12000;
      const y = resampleWhole(tone(1000, IN_RATE, amplitude), rate);
      const from = Math.round(rate * 0.1);
      const to = Math.round(rate * 0.9);
      expect(db(amplitudeAt(y, 1000, rate, from, to) / amplitude)).toBeCloseTo(0, 2);
      // Time alignment: output sample m is the input at time m/rate (no filter delay).
      let worst = 0;
      for (let m = from; m < to; m++) {
        worst = Math.max(worst, Math.abs(y[m]! - amplitude * Math.sin((2 * Math.PI * 1000 * m) / rate)));
      }
      expect(worst).toBeLessThan(4);
    });
  }

  it('lengths follow round(n × out / in) for short and odd inputs', () => {
    for (const rate of rates) {
      for (const len of [0, 1, 2, 3, 7, 100, 1151, 4801]) {
        const r = new Resampler(IN_RATE, rate);
        const total = r.push(new Int16Array(len)).length + r.end().length;
        expect(Math.abs(total - Math.round((len * rate) / IN_RATE)), `${rate} ${len}`).toBeLessThanOrEqual(1);
      }
    }
  });

  it('puts an impulse at the same time in the output', () => {
    const x = new Int16Array(4800);
    x[2400] = 30000; // 0.1 s
    for (const rate of rates) {
      const y = resampleWhole(x, rate);
      let peak = 0;
      for (let i = 1; i < y.length; i++) if (y[i]! > y[peak]!) peak = i;
      expect(Math.abs(peak - 0.1 * rate), `${rate}`).toBeLessThanOrEqual(0.5);
    }
  });

  it('24000 → 8000 removes what would alias (10 kHz → 2 kHz, 4.5 kHz → 3.5 kHz) and keeps 3.5 kHz', () => {
    const amplitude = 16000;
    const from = 800;
    const to = 7200;
    for (const [freq, alias] of [
      [10000, 2000],
      [4500, 3500],
    ] as const) {
      const y = resampleWhole(tone(freq, IN_RATE, amplitude), 8000);
      expect(db(amplitudeAt(y, alias, 8000, from, to) / amplitude), `${freq}`).toBeLessThan(-50);
      expect(db(rms(y, from, to) / (amplitude / Math.SQRT2)), `${freq}`).toBeLessThan(-50);
    }
    const pass = resampleWhole(tone(3500, IN_RATE, amplitude), 8000);
    expect(Math.abs(db(amplitudeAt(pass, 3500, 8000, from, to) / amplitude))).toBeLessThan(0.1);
  });

  it('24000 → 48000 keeps a 10.5 kHz tone and leaves no image of it at 13.5 kHz', () => {
    const amplitude = 16000;
    const y = resampleWhole(tone(10500, IN_RATE, amplitude), 48000);
    expect(Math.abs(db(amplitudeAt(y, 10500, 48000, 4800, 43200) / amplitude))).toBeLessThan(0.1);
    expect(db(amplitudeAt(y, 13500, 48000, 4800, 43200) / amplitude)).toBeLessThan(-60);
  });

  it('is the identity at 24000', () => {
    const r = new Resampler(IN_RATE, IN_RATE);
    const x = tone(440, 1000, 1000);
    expect(r.push(x)).toBe(x);
    expect(r.end().length).toBe(0);
  });

  it('rejects bad rates and use after end', () => {
    expect(() => new Resampler(24000, 0)).toThrow(RangeError);
    expect(() => new Resampler(24000.5, 8000)).toThrow(RangeError);
    const r = new Resampler(IN_RATE, 8000);
    r.end();
    expect(() => r.push(new Int16Array(10))).toThrow();
  });
});
