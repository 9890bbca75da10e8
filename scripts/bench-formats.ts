/**
 * What each audio format costs: bytes on the wire (raw and base64, as SSE sends it), bitrate, and
 * the encoder's added latency to first byte, for a set of short sentences.
 *
 * The audio is real speech from the espeak-ng command (Debian package `espeak-ng`), resampled to
 * Kokoro's 24 kHz, because the stand-in model's test tone compresses unlike speech. Without
 * espeak-ng the script says so and uses the stand-in server's tone instead.
 *
 * Usage: npm run bench:formats -- [--out docs/bench]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SAMPLE_RATE } from '../model/kokoro/constants.ts';
import { FORMATS, type AudioFormat } from '../protocol/formats.ts';
import { createStreamEncoder } from '../model/audio/formats.ts';
import { FfmpegPool } from '../model/audio/aac.ts';
import { Resampler } from '../model/audio/resample.ts';
import { markdownTable, median, replaceReadmeBlock, round } from './lib/stats.ts';
import { isMain } from './lib/cli.ts';

export const SENTENCES = [
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

/** Speech for one sentence as PCM16 at 24 kHz, from espeak-ng (22,050 Hz) through our resampler. */
function speak(text: string): Int16Array | null {
  const res = spawnSync('espeak-ng', ['-v', 'en-us', '--stdout', text], { maxBuffer: 16 * 1024 * 1024 });
  if (res.status !== 0 || !res.stdout) return null;
  const wav = res.stdout;
  const dataAt = wav.indexOf('data') + 8;
  const pcm = new Int16Array(
    wav.buffer.slice(wav.byteOffset + dataAt, wav.byteOffset + wav.length - ((wav.length - dataAt) % 2)),
  );
  const resampler = new Resampler(22050, SAMPLE_RATE);
  const a = resampler.push(pcm);
  const b = resampler.end();
  const out = new Int16Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** A stand-in when espeak-ng is missing: a modulated tone of the sentence's length. */
function tone(text: string): Int16Array {
  const n = Math.round(text.length * 0.06 * SAMPLE_RATE);
  return Int16Array.from({ length: n }, (_, i) =>
    Math.round(8000 * Math.sin(i * 0.07) * (0.6 + 0.4 * Math.sin(i / 900))),
  );
}

interface Row {
  format: AudioFormat;
  rate: number;
  bytes: number;
  base64: number;
  kbps: number;
  firstByteMs: number;
  audioBeforeFirstByteMs: number;
  encodeMsPerSecond: number;
}

const aacPool = new FfmpegPool();

async function measure(format: AudioFormat, rate: number, clips: Int16Array[]): Promise<Row> {
  let bytes = 0;
  let base64 = 0;
  let seconds = 0;
  let encodeMs = 0;
  const firstByte: number[] = [];
  const audioBefore: number[] = [];
  for (const clip of clips) {
    seconds += clip.length / SAMPLE_RATE;
    if (format === 'aac') {
      // As in the server: a pre-spawned ffmpeg is waiting; give the replacement time to start.
      aacPool.warm([{ sampleRate: rate }]);
      await new Promise((r) => setTimeout(r, 400));
    }
    const encoder = await createStreamEncoder({ format, sampleRate: rate, aacPool });
    const started = performance.now();
    let first: number | undefined;
    let fed = 0;
    // Feed as the server does, one 100 ms piece at a time here, to see how much audio the codec holds back.
    const step = SAMPLE_RATE / 10;
    for (let at = 0; at < clip.length; at += step) {
      const piece = clip.slice(at, Math.min(clip.length, at + step));
      fed += piece.length;
      const t = performance.now();
      const out = await encoder.push(piece);
      encodeMs += performance.now() - t;
      if (out.length > 0) {
        if (first === undefined) {
          first = performance.now() - started;
          audioBefore.push((fed / SAMPLE_RATE) * 1000);
        }
        bytes += out.length;
        base64 += Math.ceil(out.length / 3) * 4;
      }
    }
    const t = performance.now();
    const tail = await encoder.end();
    encodeMs += performance.now() - t;
    bytes += tail.length;
    base64 += Math.ceil(tail.length / 3) * 4;
    firstByte.push(first ?? performance.now() - started);
  }
  return {
    format,
    rate,
    bytes,
    base64,
    kbps: round((bytes * 8) / seconds / 1000, 1),
    firstByteMs: round(median(firstByte), 2),
    audioBeforeFirstByteMs: round(median(audioBefore), 0),
    encodeMsPerSecond: round(encodeMs / seconds, 2),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { out: { type: 'string', default: 'docs/bench' }, readme: { type: 'boolean', default: false } },
  });
  let source = 'espeak-ng speech';
  let clips = SENTENCES.map(speak);
  if (clips.some((c) => c === null)) {
    source = 'a modulated test tone (espeak-ng not installed: apt-get install espeak-ng for speech)';
    clips = SENTENCES.map(tone);
  }
  const audio = clips as Int16Array[];
  const seconds = audio.reduce((n, c) => n + c.length, 0) / SAMPLE_RATE;
  process.stderr.write(`${SENTENCES.length} sentences, ${seconds.toFixed(1)} s of ${source}\n`);
  const rows: Row[] = [];
  for (const format of Object.keys(FORMATS) as AudioFormat[]) {
    const rates = format === 'mulaw' ? [8000] : format === 'opus' ? [24000, 48000] : [24000, 16000];
    for (const rate of rates) {
      process.stderr.write(`  ${format} ${rate} Hz…\n`);
      rows.push(await measure(format, rate, audio));
    }
  }
  const md = [
    `${SENTENCES.length} sentences, ${seconds.toFixed(1)} s of ${source}; each sentence a new stream fed in 100 ms pieces. ` +
      '"encode ms" is wall time inside push/end: for AAC it includes waiting for the ffmpeg process, not only CPU.',
    '',
    markdownTable(
      [
        'format',
        'rate (Hz)',
        'bytes',
        'base64 bytes (SSE)',
        'kbit/s',
        'first byte after (ms of audio fed)',
        'first byte (ms, median)',
        'encode ms per s of audio',
      ],
      rows.map((r) => [
        r.format,
        r.rate,
        r.bytes,
        r.base64,
        r.kbps,
        r.audioBeforeFirstByteMs,
        r.firstByteMs,
        r.encodeMsPerSecond,
      ]),
    ),
  ].join('\n');
  mkdirSync(values.out!, { recursive: true });
  aacPool.close();
  writeFileSync(join(values.out!, 'formats.json'), `${JSON.stringify({ source, seconds, rows }, null, 2)}\n`);
  writeFileSync(join(values.out!, 'formats.md'), `${md}\n\nCommand: \`npm run bench:formats\`\n`);
  process.stdout.write(`${md}\n`);
  if (values.readme) replaceReadmeBlock('bench:formats', md);
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
