/**
 * Every format and sample rate through the real server, decoded by the real ffmpeg: durations
 * match the PCM, and every WebSocket message of a framed format stands on its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORMATS, type AudioFormat } from '../../protocol/formats.ts';
import {
  CODEC_NAMES,
  FFMPEG,
  adtsFrames,
  decode,
  decodeAsync,
  mp3Frames,
  oggPages,
  probe,
} from './audio-tools.ts';
import { TestClient, requestsOf, sharedServer, type TestServer } from './harness.ts';

let server: TestServer;
beforeAll(async () => {
  server = await sharedServer();
});
afterAll(() => server.close());

const TEXT = 'Formats are tested here. Every one of them, at every rate.';

async function post(
  body: Record<string, unknown>,
  accept?: string,
): Promise<{ status: number; type: string; bytes: Buffer; text: string }> {
  const res = await fetch(`${server.http}/invocations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(accept ? { accept } : {}) },
    body: JSON.stringify(body),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, type: res.headers.get('content-type') ?? '', bytes, text: bytes.toString() };
}

/** Seconds of audio in the 24 kHz PCM for TEXT, the reference every format is held to. */
let referenceSeconds = 0;
beforeAll(async () => {
  const pcm = await post({ text: TEXT, format: 'pcm' });
  referenceSeconds = pcm.bytes.length / 2 / 24_000;
});

/**
 * Codec delay and padding allowance: about two frames of the largest codec (AAC 1024 samples, MP3
 * 576–1152), which at low sample rates is long.
 */
const tolerance = (rate: number) => Math.max(0.12, (2 * 1024) / rate + 0.02);

const combos = (Object.keys(FORMATS) as AudioFormat[]).flatMap((format) =>
  (FORMATS[format].rates as readonly number[]).map((rate) => [format, rate] as const),
);

describe.skipIf(!FFMPEG.available)(`POST /invocations in every format and sample rate${FFMPEG.note}`, () => {
  // Side by side: each waits on the server and on an ffmpeg process, and neither measures time.
  it.concurrent.each(combos)('%s at %i Hz decodes to the same duration', async (format, rate) => {
    const res = await post({ text: TEXT, format, sample_rate: rate });
    expect(res.status).toBe(200);
    expect(res.type).toBe(FORMATS[format].contentType(rate));
    const decoded = await decodeAsync(res.bytes, format, rate);
    expect(decoded.ok, decoded.stderr).toBe(true);
    expect(Math.abs(decoded.samples.length / rate - referenceSeconds)).toBeLessThan(tolerance(rate));
  });

  const probed = combos.filter(([format]) => CODEC_NAMES[format] !== undefined);
  it.concurrent.each(probed)(
    '%s at %i Hz: ffprobe finds the codec, the rate and one channel',
    async (format, rate) => {
      const info = await probe((await post({ text: TEXT, format, sample_rate: rate })).bytes);
      expect(info.codec_name).toBe(CODEC_NAMES[format]);
      expect(Number(info.sample_rate)).toBe(format === 'opus' ? 48000 : rate);
      expect(info.channels).toBe(1);
    },
  );

  it('keeps the tone after resampling: the same audio, not noise', async () => {
    const ref = decode((await post({ text: TEXT, format: 'pcm' })).bytes, 'pcm', 24000).samples;
    const down = decode(
      (await post({ text: TEXT, format: 'pcm', sample_rate: 48000 })).bytes,
      'pcm',
      48000,
    ).samples;
    // Every other sample of the 48 kHz version tracks the 24 kHz original closely.
    let err = 0;
    let energy = 0;
    for (let i = 100; i < ref.length - 100; i++) {
      err += (down[2 * i]! - ref[i]!) ** 2;
      energy += ref[i]! ** 2;
    }
    expect(err / energy).toBeLessThan(0.01);
  });

  it('returns one complete file for stream:false in every format', async () => {
    for (const format of Object.keys(FORMATS) as AudioFormat[]) {
      const res = await post({ text: TEXT, format, stream: false });
      expect(res.status).toBe(200);
      const rate = FORMATS[format].defaultRate;
      expect(decode(res.bytes, format, rate).ok).toBe(true);
    }
  });

  it.each([
    [
      { format: 'ogg' },
      /format should be one of: pcm, wav, mp3, opus, aac, flac, mulaw, alaw; got the string "ogg"/,
    ],
    [
      { format: 'opus', sample_rate: 22050 },
      /sample_rate for opus should be one of: 8000, 16000, 24000, 48000; got number 22050/,
    ],
    [{ format: 'mulaw', sample_rate: 16000 }, /sample_rate for mulaw should be one of: 8000/],
    [
      { format: 'mp3', sample_rate: 11025 },
      /sample_rate for mp3 should be one of: 8000, 16000, 22050, 24000, 44100, 48000/,
    ],
  ])('refuses %j, listing what is supported', async (options, message) => {
    const res = await post({ text: 'Hi.', ...options });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({
      code: 'invalid_option',
      message: expect.stringMatching(message),
    });
  });
});

describe.skipIf(!FFMPEG.available)(`WS messages are whole frames${FFMPEG.note}`, () => {
  const framed: [AudioFormat, (b: Uint8Array) => Uint8Array[] | null][] = [
    ['mp3', mp3Frames],
    ['aac', adtsFrames],
    ['opus', oggPages],
  ];
  it.each(framed)(
    '%s: every binary message tiles into whole frames and the stream decodes',
    async (format, split) => {
      const client = await TestClient.open(server.ws);
      client.send({ text: TEXT, format, request_id: format });
      await client.untilControls('synthesis_complete', 1);
      const [request] = requestsOf(client.frames);
      expect(request!.audio.length).toBeGreaterThan(1);
      for (const message of request!.audio)
        expect(split(message), `${format} message of ${message.length} bytes`).not.toBeNull();
      const whole = decode(Buffer.concat(request!.audio), format, 24000);
      expect(whole.ok, whole.stderr).toBe(true);
      client.close();
    },
  );

  it.each(['mp3', 'aac'] as const)(
    '%s: MP3 and ADTS frames stand alone: each message decodes',
    async (format) => {
      const client = await TestClient.open(server.ws);
      client.send({ text: TEXT, format });
      await client.untilControls('synthesis_complete', 1);
      const decoded = await Promise.all(
        requestsOf(client.frames)[0]!.audio.map((m) => decodeAsync(m, format, 24000)),
      );
      expect(decoded.filter((d) => !d.ok)).toEqual([]);
      client.close();
    },
  );

  it('opus: the first message carries both header pages', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: TEXT, format: 'opus' });
    await client.untilControls('synthesis_complete', 1);
    const pages = oggPages(requestsOf(client.frames)[0]!.audio[0]!)!;
    expect(Buffer.from(pages[0]!.subarray(28, 36)).toString()).toBe('OpusHead');
    expect(Buffer.from(pages[1]!.subarray(28, 36)).toString()).toBe('OpusTags');
    client.close();
  });

  it('flac: each message after the first decodes when put behind the stream header', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: TEXT, format: 'flac' });
    await client.untilControls('synthesis_complete', 1);
    const audio = requestsOf(client.frames)[0]!.audio;
    const header = audio[0]!.subarray(0, 42); // "fLaC" + STREAMINFO block
    expect(header.subarray(0, 4).toString()).toBe('fLaC');
    for (const message of audio.slice(1)) {
      expect(message[0]).toBe(0xff);
      expect(decode(Buffer.concat([header, message]), 'flac', 24000).ok).toBe(true);
    }
    client.close();
  });

  it('mulaw at 8 kHz over WS: one byte per sample', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: TEXT, format: 'mulaw' });
    await client.untilControls('synthesis_complete', 1);
    const bytes = Buffer.concat(requestsOf(client.frames)[0]!.audio).length;
    expect(Math.abs(bytes / 8000 - referenceSeconds)).toBeLessThan(0.01);
    client.close();
  });
});

describe.skipIf(!FFMPEG.available)(`SSE transport${FFMPEG.note}`, () => {
  function parseSse(text: string): { event: string; data: Record<string, unknown> }[] {
    return text
      .split('\n\n')
      .filter((block) => block.trim() !== '')
      .map((block) => {
        const event = /^event: (.+)$/m.exec(block)![1]!;
        const data = JSON.parse(/^data: (.+)$/m.exec(block)![1]!) as Record<string, unknown>;
        return { event, data };
      });
  }

  it.each(Object.keys(FORMATS) as AudioFormat[])(
    '%s: start, numbered chunks of base64 audio, end',
    async (format) => {
      const res = await post({ text: TEXT, format, transport: 'sse', request_id: `sse-${format}` });
      expect(res.status).toBe(200);
      expect(res.type).toMatch(/^text\/event-stream/);
      const events = parseSse(res.text);
      expect(events[0]).toEqual({
        event: 'audio_stream_start',
        data: {
          request_id: `sse-${format}`,
          format,
          voice: 'af_heart',
          sample_rate: FORMATS[format].defaultRate,
        },
      });
      const chunks = events.filter((e) => e.event === 'audio_chunk');
      expect(chunks.map((c) => c.data.seq)).toEqual(chunks.map((_, i) => i));
      const end = events.at(-1)!;
      expect(end.event).toBe('audio_stream_end');
      expect(end.data).toMatchObject({ request_id: `sse-${format}`, total_chunks: chunks.length });
      expect(Number(end.data.duration_s)).toBeCloseTo(referenceSeconds, 2);
      const bytes = Buffer.concat(chunks.map((c) => Buffer.from(String(c.data.data), 'base64')));
      expect(decode(bytes, format, FORMATS[format].defaultRate).ok).toBe(true);
    },
  );

  it('is chosen by Accept: text/event-stream too', async () => {
    const res = await post({ text: 'Accept header.' }, 'text/event-stream');
    expect(res.type).toMatch(/^text\/event-stream/);
    expect(parseSse(res.text)[0]!.event).toBe('audio_stream_start');
  });

  it('still answers bad input with a 4xx JSON error, before any event', async () => {
    const res = await post({ text: '', transport: 'sse' });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ code: 'empty_text' });
  });
});
