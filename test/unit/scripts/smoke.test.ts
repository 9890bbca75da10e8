import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../scripts/lib/cli.ts';
import { decodeControlFrame, isControlFrame } from '../../../protocol/frames.ts';
import {
  DEFAULT_TEXTS,
  DEFAULT_URL,
  FRAME_TOLERANCE_S,
  classifyFrame,
  deriveEndpoints,
  durationMatches,
  formatResultTable,
  parseCliArgs,
  pcmSeconds,
  type ResultRow,
} from '../../../scripts/lib/smoke-checks.ts';

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');

describe('frame demultiplexing', () => {
  it('classes a binary frame holding a JSON object as control', () => {
    const payload = bytes('{"type":"synthesis_complete","request_id":"a","total_duration_s":1.5}');
    expect(isControlFrame(payload, true)).toBe(true);
    expect(decodeControlFrame(payload)).toEqual({
      type: 'synthesis_complete',
      request_id: 'a',
      total_duration_s: 1.5,
    });
  });

  it('accepts surrounding JSON whitespace', () => {
    expect(decodeControlFrame(bytes(' \n{"type":"error"}\r\n\t'))).toEqual({ type: 'error' });
  });

  it('classes PCM that starts with 0x7b ("{") as audio', () => {
    // Samples 0x307b and 0x1234: the first byte is "{" but the payload is not JSON.
    const pcm = Buffer.from([0x7b, 0x30, 0x34, 0x12, 0x00, 0x80]);
    expect(isControlFrame(pcm, true)).toBe(false);
    expect(classifyFrame(pcm, true)).toEqual({ kind: 'audio' });
  });

  it('classes PCM framed by "{" and "}" bytes but not JSON as audio', () => {
    const pcm = Buffer.from([0x7b, 0x01, 0x02, 0x03, 0x04, 0x7d]);
    expect(isControlFrame(pcm, true)).toBe(false);
  });

  it('classes braces around invalid UTF-8 as audio', () => {
    const pcm = Buffer.concat([bytes('{"a":"'), Buffer.from([0xff, 0xfe]), bytes('"}')]);
    expect(decodeControlFrame(pcm)).toBeNull();
    expect(isControlFrame(pcm, true)).toBe(false);
  });

  it('classes binary JSON that is not an object as audio', () => {
    for (const text of ['[1,2]', 'null', '42', '"x"', '']) {
      expect(isControlFrame(bytes(text), true)).toBe(false);
    }
  });

  it('classes every text frame as control, even when it is not a JSON object', () => {
    expect(classifyFrame('{"type":"synthesis_start","request_id":"r"}', false)).toEqual({
      kind: 'control',
      message: { type: 'synthesis_start', request_id: 'r' },
    });
    expect(classifyFrame(bytes('not json'), false)).toEqual({ kind: 'malformed-control', text: 'not json' });
    expect(isControlFrame(bytes('[1]'), false)).toBe(true);
  });
});

describe('URL derivation', () => {
  it('keeps the default WebSocket URL and puts /ping on the same host', () => {
    expect(deriveEndpoints(DEFAULT_URL)).toEqual({
      wsUrl: 'ws://127.0.0.1:8080/invocations-bidirectional-stream',
      pingUrl: 'http://127.0.0.1:8080/ping',
    });
  });

  it('derives the WebSocket URL from http://host:port', () => {
    expect(deriveEndpoints('http://localhost:9000')).toEqual({
      wsUrl: 'ws://localhost:9000/invocations-bidirectional-stream',
      pingUrl: 'http://localhost:9000/ping',
    });
    expect(deriveEndpoints('https://tts.example.com/')).toEqual({
      wsUrl: 'wss://tts.example.com/invocations-bidirectional-stream',
      pingUrl: 'https://tts.example.com/ping',
    });
  });

  it('accepts a bare host:port and ws:// without a path', () => {
    expect(deriveEndpoints('localhost:8080').wsUrl).toBe(
      'ws://localhost:8080/invocations-bidirectional-stream',
    );
    expect(deriveEndpoints('ws://10.0.0.2:8080').pingUrl).toBe('http://10.0.0.2:8080/ping');
  });

  it('keeps a proxy prefix for both routes', () => {
    expect(deriveEndpoints('wss://gw.example.com/tts/invocations-bidirectional-stream')).toEqual({
      wsUrl: 'wss://gw.example.com/tts/invocations-bidirectional-stream',
      pingUrl: 'https://gw.example.com/tts/ping',
    });
  });

  it('rejects other schemes', () => {
    expect(() => deriveEndpoints('ftp://host:21')).toThrow(/ws:\/\//);
  });
});

describe('result table', () => {
  const rows: ResultRow[] = [
    {
      request: '1',
      chars: 61,
      bytes: 172_800,
      audioSeconds: 3.6,
      ttfaFromSendMs: 181.4,
      ttfaOwnTurnMs: 181.4,
      status: 'ok',
    },
    {
      request: '6 (after error)',
      chars: 27,
      bytes: 0,
      audioSeconds: null,
      ttfaFromSendMs: null,
      ttfaOwnTurnMs: null,
      status: 'FAIL',
    },
  ];

  it('aligns columns and shows missing figures as "-"', () => {
    const lines = formatResultTable(rows).split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(
      /^request\s+chars\s+bytes\s+audio s\s+TTFA from send ms\s+TTFA own turn ms\s+status$/,
    );
    expect(lines[1]).toMatch(/^-+( +-+){6}$/);
    expect(lines[2]).toMatch(/^1\s+61\s+172800\s+3\.60\s+181\s+181\s+ok$/);
    expect(lines[3]).toMatch(/^6 \(after error\)\s+27\s+0\s+-\s+-\s+-\s+FAIL$/);
    // Numbers are right-aligned: the "bytes" column ends at the same offset on every line.
    const bytesEnd = lines[0]!.indexOf('bytes') + 'bytes'.length;
    expect(lines[2]!.slice(0, bytesEnd).endsWith('172800')).toBe(true);
    expect(lines[3]!.slice(0, bytesEnd).endsWith(' 0')).toBe(true);
  });
});

describe('duration check', () => {
  it('accepts up to 5 % difference', () => {
    expect(durationMatches(pcmSeconds(48_000 * 2), 2.0)).toBe(true);
    expect(durationMatches(2.09, 2.0)).toBe(true);
    expect(durationMatches(2.11, 2.0)).toBe(false);
  });

  it('accepts one frame of difference on very short clips', () => {
    expect(durationMatches(0.1 + FRAME_TOLERANCE_S, 0.1)).toBe(true);
    expect(durationMatches(0.1 + 2 * FRAME_TOLERANCE_S, 0.1)).toBe(false);
  });
});

describe('command line', () => {
  it('has the documented defaults', () => {
    const options = parseCliArgs([]);
    expect(options).toMatchObject({
      url: DEFAULT_URL,
      voice: 'af_heart',
      outDir: './out/smoke',
      format: 'pcm',
      timeoutMs: 60_000,
      help: false,
    });
    expect(options.texts).toEqual(DEFAULT_TEXTS);
    expect(DEFAULT_TEXTS.some((t) => /\d/.test(t))).toBe(true);
    expect(DEFAULT_TEXTS.some((t) => t.endsWith('?'))).toBe(true);
  });

  it('takes --text repeatedly', () => {
    expect(parseCliArgs(['--text', 'One.', '--text', 'Two?']).texts).toEqual(['One.', 'Two?']);
  });

  it('rejects unsupported formats, bad timeouts and unknown flags', () => {
    expect(() => parseCliArgs(['--format', 'mp3'])).toThrow(UsageError);
    expect(() => parseCliArgs(['--timeout-ms', '0'])).toThrow(UsageError);
    expect(() => parseCliArgs(['--timeout-ms', '5s'])).toThrow(UsageError);
    expect(() => parseCliArgs(['--nope'])).toThrow(UsageError);
  });
});
