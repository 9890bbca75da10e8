import { describe, expect, it } from 'vitest';
import { SseParser, decodeAudioEvent, readSse } from '../../../packages/client/src/sse.ts';
import { formatSseEvent } from '../../../protocol/sse.ts';

/** A recorded-shaped stream: start, three audio chunks (binary data with every byte value), end. */
function recording(): { bytes: Uint8Array; audio: Uint8Array } {
  const audio = Uint8Array.from({ length: 700 }, (_, i) => (i * 37) % 256);
  const parts = [audio.subarray(0, 100), audio.subarray(100, 450), audio.subarray(450)];
  const text =
    formatSseEvent('audio_stream_start', {
      request_id: 'r1',
      format: 'mp3',
      voice: 'af_heart(1)',
      sample_rate: 24000,
    }) +
    parts
      .map((p, seq) =>
        formatSseEvent('audio_chunk', { request_id: 'r1', seq, data: Buffer.from(p).toString('base64') }),
      )
      .join('') +
    formatSseEvent('audio_stream_end', { request_id: 'r1', total_chunks: 3, duration_s: 1.5 });
  return { bytes: new TextEncoder().encode(text), audio };
}

function reassemble(pieces: Uint8Array[]): { names: string[]; audio: Uint8Array } {
  const parser = new SseParser();
  const events = [...pieces.flatMap((p) => parser.push(p)), ...parser.end()].map(decodeAudioEvent);
  const chunks = events.flatMap((e) => (e.type === 'audio_chunk' ? [e.audio] : []));
  return { names: events.map((e) => e.type), audio: Buffer.concat(chunks) };
}

describe('SseParser', () => {
  const { bytes, audio } = recording();
  const expectedNames = [
    'audio_stream_start',
    'audio_chunk',
    'audio_chunk',
    'audio_chunk',
    'audio_stream_end',
  ];

  it('reassembles the stream split at every possible single point', () => {
    for (let cut = 0; cut <= bytes.length; cut++) {
      const got = reassemble([bytes.subarray(0, cut), bytes.subarray(cut)]);
      expect(got.names).toEqual(expectedNames);
      expect(Buffer.from(got.audio).equals(Buffer.from(audio))).toBe(true);
    }
  });

  it('reassembles any split into many random pieces (property)', () => {
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let trial = 0; trial < 300; trial++) {
      const pieces: Uint8Array[] = [];
      for (let at = 0; at < bytes.length; ) {
        const n = 1 + Math.floor(rand() * (trial % 2 ? 7 : 400));
        pieces.push(bytes.subarray(at, at + n));
        at += n;
      }
      const got = reassemble(pieces);
      expect(got.names).toEqual(expectedNames);
      expect(Buffer.from(got.audio).equals(Buffer.from(audio))).toBe(true);
    }
  });

  it('handles CRLF and CR line endings split across pieces, comments, multi-line data and a UTF-8 split', () => {
    const parser = new SseParser();
    const text = ': keep-alive\r\nevent: note\r\ndata: line one\r\ndata: é\r\rdata: x\r\n\r\n';
    const bytes = new TextEncoder().encode(text);
    const events = [];
    for (let i = 0; i < bytes.length; i++) events.push(...parser.push(bytes.subarray(i, i + 1)));
    expect(events).toEqual([
      { event: 'note', data: 'line one\né' },
      { event: 'message', data: 'x' },
    ]);
  });

  it('reads from an async byte stream and drops an unfinished event at the end', async () => {
    async function* body() {
      yield 'event: a\ndata: {"x":1}\n\n';
      yield 'event: b\ndata: unfinished';
    }
    const events = [];
    for await (const e of readSse(body())) events.push(e);
    expect(events).toEqual([{ event: 'a', data: '{"x":1}' }]);
  });
});
