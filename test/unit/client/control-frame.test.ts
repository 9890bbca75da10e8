import { describe, expect, it } from 'vitest';
import { decodeControlFrame, isControlFrame } from '../../../packages/client/src/index.ts';

const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values);
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const concat = (...parts: Uint8Array[]): Uint8Array => Uint8Array.from(parts.flatMap((p) => [...p]));

/** s16le samples as bytes, the way the server sends PCM. */
function pcm(samples: number[]): Uint8Array {
  const out = new Uint8Array(samples.length * 2);
  const view = new DataView(out.buffer);
  samples.forEach((s, i) => view.setInt16(i * 2, s, true));
  return out;
}

describe('decodeControlFrame', () => {
  const controls = new Map<string, Record<string, unknown>>([
    ['{"type":"synthesis_start","request_id":"r1"}', { type: 'synthesis_start', request_id: 'r1' }],
    [
      '{"type":"synthesis_complete","request_id":"r1","total_duration_s":1.5,"elapsed_s":0.2}',
      { type: 'synthesis_complete', request_id: 'r1', total_duration_s: 1.5, elapsed_s: 0.2 },
    ],
    ['{"type":"error","code":"busy","message":"wait"}', { type: 'error', code: 'busy', message: 'wait' }],
    ['  \r\n{"type":"x"}\n ', { type: 'x' }],
    ['{}', {}],
    ['{"text":"héllo — 你好 😀"}', { text: 'héllo — 你好 😀' }],
  ]);

  for (const [text, expected] of controls) {
    it(`control as bytes and as text: ${JSON.stringify(text)}`, () => {
      expect(decodeControlFrame(utf8(text))).toEqual(expected);
      expect(decodeControlFrame(text)).toEqual(expected);
    });
  }

  const audio = new Map<string, Uint8Array | string>([
    ['empty', bytes()],
    ['a single brace', bytes(0x7b)],
    ['PCM starting with 0x7b 0x00', bytes(0x7b, 0x00, 0x10, 0xff, 0x7d, 0x00)],
    ['PCM samples whose first byte is {', pcm([0x007b, -1, 300, 0x7d7d])],
    ['PCM that starts with {"a":1} and goes on', concat(utf8('{"a":1}'), pcm([1, 2, 3, 4]))],
    ['PCM that starts with {"a":1} followed by more text-like bytes', utf8('{"a":1}{"b":2}')],
    ['braces around invalid UTF-8', bytes(0x7b, 0xff, 0xfe, 0x7d)],
    ['braces around a lone continuation byte', bytes(0x7b, 0x22, 0x80, 0x22, 0x3a, 0x31, 0x7d)],
    ['a JSON array', utf8('[{"type":"x"}]')],
    ['a JSON number', utf8('123')],
    ['a JSON string', utf8('"{}"')],
    ['JSON null', utf8('null')],
    ['an unclosed object', utf8('{"type":"x"')],
    ['text that is not JSON', '{not json}'],
    ['an array as text', '[1,2]'],
    ['a number as text', '42'],
    ['a UTF-8 BOM before the object', concat(bytes(0xef, 0xbb, 0xbf), utf8('{"a":1}'))],
    ['silence', new Uint8Array(4800)],
  ]);

  for (const [what, payload] of audio) {
    it(`audio (null): ${what}`, () => expect(decodeControlFrame(payload)).toBeNull());
  }

  it('reads a view into a larger buffer (a Node.js Buffer from a pool) by its own bounds', () => {
    const big = concat(pcm([5, 6]), utf8('{"type":"synthesis_start"}'), pcm([7]));
    expect(decodeControlFrame(big.subarray(4, big.length - 2))).toEqual({ type: 'synthesis_start' });
    expect(decodeControlFrame(Buffer.from('{"type":"x"}'))).toEqual({ type: 'x' });
  });
});

describe('isControlFrame', () => {
  it('treats every text frame as control (the server sends control as text)', () => {
    expect(isControlFrame('{"type":"synthesis_complete"}', false)).toBe(true);
    expect(isControlFrame(utf8('{"type":"synthesis_complete"}'), false)).toBe(true);
    expect(isControlFrame('not json', false)).toBe(true);
  });

  it('applies the whole-payload rule to binary frames', () => {
    expect(isControlFrame(utf8('{"type":"synthesis_complete"}'), true)).toBe(true);
    expect(isControlFrame(bytes(0x7b, 0x00, 0x01, 0x02), true)).toBe(false);
    expect(isControlFrame(concat(utf8('{"a":1}'), pcm([9, 9])), true)).toBe(false);
    expect(isControlFrame(utf8('[1]'), true)).toBe(false);
    expect(isControlFrame(pcm([0, 1, 2, 3]), true)).toBe(false);
  });
});
