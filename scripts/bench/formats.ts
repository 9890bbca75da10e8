/**
 * What each audio format costs, in-process: bytes (raw and as SSE's base64), bitrate, and what the
 * encoder adds before the first byte. The audio is speech from the espeak-ng command (Debian
 * `espeak-ng`) resampled to 24 kHz, because the stand-in model's tone compresses unlike speech;
 * without it, a modulated tone, and the table says so.
 */
import { spawnSync } from 'node:child_process';
import { FfmpegPool } from '../../model/audio/aac.ts';
import { createStreamEncoder } from '../../model/audio/formats.ts';
import { Resampler } from '../../model/audio/resample.ts';
import { SAMPLE_RATE } from '../../model/kokoro/constants.ts';
import { FORMATS, type AudioFormat } from '../../protocol/formats.ts';
import { stat, type Case } from '../lib/bench-runner.ts';

const SENTENCES = [
  'Hello, how can I help you today?',
  'Your order has shipped and should arrive on Thursday.',
  'I found three restaurants near you that are open now.',
  'The meeting was moved to half past two.',
  'Sure, I can set a reminder for that.',
  'It looks like rain this afternoon, so bring an umbrella.',
  'Your balance is two hundred and forty dollars.',
  'Let me check that for you.',
  'The next train leaves in seven minutes from platform four.',
  'I am sorry, I did not catch that. Could you say it again?',
  'Your appointment is confirmed for Monday morning.',
  'The package was left at your front door.',
  'Traffic is light, so the drive should take twenty minutes.',
  'I have added milk and eggs to your shopping list.',
  'The museum opens at ten and closes at six.',
  'Would you like me to read the rest of the message?',
  'Your flight is on time and boarding starts at gate twelve.',
  'The temperature outside is eighteen degrees.',
  'I can transfer you to a specialist right away.',
  'Thanks for calling, and have a great day!',
];

/** Speech for one sentence as PCM16 at 24 kHz, from espeak-ng (22,050 Hz); null without it. */
function speak(text: string): Int16Array | null {
  const res = spawnSync('espeak-ng', ['-v', 'en-us', '--stdout', text], { maxBuffer: 16 * 1024 * 1024 });
  if (res.status !== 0 || !res.stdout) return null;
  const wav = res.stdout;
  const at = wav.indexOf('data') + 8;
  const pcm = new Int16Array(
    wav.buffer.slice(wav.byteOffset + at, wav.byteOffset + wav.length - ((wav.length - at) % 2)),
  );
  const resampler = new Resampler(22050, SAMPLE_RATE);
  return Int16Array.from([...resampler.push(pcm), ...resampler.end()]);
}

/** A modulated tone of the sentence's length. */
const tone = (text: string) =>
  Int16Array.from({ length: Math.round(text.length * 0.06 * SAMPLE_RATE) }, (_, i) =>
    Math.round(8000 * Math.sin(i * 0.07) * (0.6 + 0.4 * Math.sin(i / 900))),
  );

const RATES: Record<AudioFormat, number[]> = { mulaw: [8000], alaw: [8000], opus: [24000, 48000] } as Record<
  AudioFormat,
  number[]
>;
const UNITS = {
  bytes: 'bytes',
  base64: 'base64 bytes (SSE)',
  kbps: 'kbit/s',
  fed: 'first byte after (ms of audio fed)',
  first: 'first byte (ms, median)',
  encode: 'encode ms per s of audio',
} as const;

export const formats: Case = {
  name: 'formats',
  summary: 'bytes, bitrate and encoder latency of every audio format (in-process)',
  about:
    'What each audio format costs: bytes on the wire (raw and base64, as SSE sends it), bitrate, and the ' +
    'encoder’s added latency, on speech from espeak-ng fed as the server feeds it, 100 ms at a time.',
  servers: [],
  models: [],
  trials: 1,
  measures: ['encoder'],
  flags: {},
  async run(ctx) {
    const spoken = SENTENCES.map(speak);
    const speech = spoken.every(Boolean);
    const clips = speech ? (spoken as Int16Array[]) : SENTENCES.map(tone);
    const seconds = clips.reduce((n, c) => n + c.length, 0) / SAMPLE_RATE;
    const source = speech ? 'espeak-ng speech' : 'a modulated tone (no espeak-ng: apt-get install espeak-ng)';
    ctx.figure({ measure: 'encoder', what: 'audio', unit: `s of ${source}`, samples: [seconds] });
    const aacPool = new FfmpegPool();
    try {
      for (const format of Object.keys(FORMATS) as AudioFormat[]) {
        for (const rate of RATES[format] ?? [24000, 16000]) {
          ctx.log(`${format} ${rate} Hz…`);
          const s: Record<keyof typeof UNITS, number[]> = {
            bytes: [],
            base64: [],
            kbps: [],
            fed: [],
            first: [],
            encode: [],
          };
          let encodeMs = 0;
          for (const clip of clips) {
            if (format === 'aac') {
              // As in the server, a pre-spawned ffmpeg is waiting; give the replacement time to start.
              aacPool.warm([{ sampleRate: rate }]);
              await new Promise((r) => setTimeout(r, 400));
            }
            const encoder = await createStreamEncoder({ format, sampleRate: rate, aacPool });
            const started = performance.now();
            let bytes = 0;
            let fed = 0;
            const add = (out: Uint8Array) => {
              if (out.length > 0 && bytes === 0) {
                s.first.push(performance.now() - started);
                s.fed.push((fed / SAMPLE_RATE) * 1000);
              }
              bytes += out.length;
              s.base64.push(Math.ceil(out.length / 3) * 4);
            };
            for (let at = 0; at < clip.length; at += SAMPLE_RATE / 10) {
              const piece = clip.slice(at, at + SAMPLE_RATE / 10);
              fed += piece.length;
              const t = performance.now();
              const out = await encoder.push(piece);
              encodeMs += performance.now() - t;
              add(out);
            }
            const t = performance.now();
            add(await encoder.end());
            encodeMs += performance.now() - t;
            s.bytes.push(bytes);
          }
          const total = s.bytes.reduce((a, b) => a + b, 0);
          s.bytes = [total];
          s.base64 = [s.base64.reduce((a, b) => a + b, 0)];
          s.kbps = [(total * 8) / seconds / 1000];
          s.encode = [encodeMs / seconds];
          for (const [k, samples] of Object.entries(s))
            ctx.figure({
              measure: 'encoder',
              what: `${format} ${rate}`,
              unit: UNITS[k as keyof typeof UNITS],
              samples,
            });
        }
      }
    } finally {
      aacPool.close();
    }
  },
  report(figures) {
    const audio = figures.find((f) => f.what === 'audio')!;
    const kinds = [...new Set(figures.map((f) => f.what))].filter((w) => w !== 'audio');
    const cell = (what: string, unit: string, digits: number) => stat(figures, { what, unit }, 0.5, digits);
    return {
      tables: [
        {
          title: `${SENTENCES.length} sentences, ${audio.samples[0]!.toFixed(1)} ${audio.unit}, each a new stream fed in 100 ms pieces`,
          header: ['format', 'rate (Hz)', ...Object.values(UNITS)],
          rows: kinds.map((what) => [
            ...what.split(' '),
            cell(what, UNITS.bytes, 0),
            cell(what, UNITS.base64, 0),
            cell(what, UNITS.kbps, 1),
            cell(what, UNITS.fed, 0),
            cell(what, UNITS.first, 2),
            cell(what, UNITS.encode, 2),
          ]),
        },
      ],
      notes: [
        '"encode ms" is wall time inside push/end: for AAC it includes waiting for the ffmpeg process, not only CPU.',
      ],
    };
  },
};
