import { describe, expect, it } from 'vitest';
import {
  IncrementalSentenceChunker,
  SentenceChunker,
  splitSentences,
} from '../../../model/text/sentences.ts';

const cases = new Map<string, string[]>([
  ['Hello world. How are you?', ['Hello world.', 'How are you?']],
  ['It costs 3.5 dollars. Cheap!', ['It costs 3.5 dollars.', 'Cheap!']],
  ['Dr. Smith arrived. He sat down.', ['Dr. Smith arrived.', 'He sat down.']],
  ['Bring fruit, e.g. apples. Then leave.', ['Bring fruit, e.g. apples.', 'Then leave.']],
  ['The U.S. Army moved. Fast.', ['The U.S. Army moved.', 'Fast.']],
  ['J. R. R. Tolkien wrote it. Yes.', ['J. R. R. Tolkien wrote it.', 'Yes.']],
  ['Wait... what happened? Nothing.', ['Wait... what happened?', 'Nothing.']],
  ['He said "Stop." Then he left.', ['He said "Stop."', 'Then he left.']],
  ['(This is quoted.) Next one.', ['(This is quoted.)', 'Next one.']],
  ['Really?! Yes.', ['Really?!', 'Yes.']],
  ['你好。今天很好！是吗？', ['你好。', '今天很好！', '是吗？']],
  ['First line\nSecond line', ['First line', 'Second line']],
  ['No stop at the end', ['No stop at the end']],
  ['I have 3. Then more.', ['I have 3.', 'Then more.']],
  ['Version v2.0 is out. Try it.', ['Version v2.0 is out.', 'Try it.']],
  ['  \n  ', []],
  ['', []],
]);

describe('splitSentences', () => {
  for (const [input, expected] of cases) {
    it(JSON.stringify(input), () => expect(splitSentences(input)).toEqual(expected));
  }

  it('cuts an over-long sentence at a clause mark, then at a space', () => {
    const long = `${'word '.repeat(30)}and then, ${'more '.repeat(30)}end.`;
    const parts = splitSentences(long, { maxChars: 200 });
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(200);
    expect(parts[0]!.endsWith(',')).toBe(true);
    expect(parts.join(' ').replace(/\s+/g, ' ')).toBe(long.trim().replace(/\s+/g, ' '));
  });

  it('never returns a chunk over the limit, even with a clause mark right at it', () => {
    const text = `${'a'.repeat(20)}, ${'b'.repeat(30)}`; // the comma is character 21, just past a 20 limit
    const parts = splitSentences(text, { maxChars: 20 });
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(20);
    expect(parts.join('').replace(/\s/g, '')).toBe(text.replace(/\s/g, ''));
  });

  it('releases no early first chunk unless asked (the server splits whole sentences)', () => {
    const text = 'A long opening sentence of a reply, with a comma in it. Then another.';
    expect(splitSentences(text)).toEqual([
      'A long opening sentence of a reply, with a comma in it.',
      'Then another.',
    ]);
    expect(splitSentences(text, { firstChunkMinChars: 10 })).toEqual([
      'A long opening sentence of a reply,',
      'with a comma in it.',
      'Then another.',
    ]);
  });

  it('cuts a sentence with no spaces at the hard limit without losing characters', () => {
    const blob = 'x'.repeat(1000);
    const parts = splitSentences(blob, { maxChars: 300 });
    expect(parts.join('')).toBe(blob);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(300);
  });
});

describe('IncrementalSentenceChunker', () => {
  it('is still exported under its former name', () => {
    expect(SentenceChunker).toBe(IncrementalSentenceChunker);
  });

  const texts = [
    ...cases.keys(),
    'Mr. and Mrs. Jones paid $3.50 at 10:30 a.m. on Jan. 5. They left! "Why?" she asked… Nobody knew.\nNew paragraph here',
    `${'A fairly long clause, '.repeat(40)}and a final one. Short.`,
  ];

  it.each(texts.map((t) => [t]))('gives the same sentences fed character by character: %j', (text) => {
    const chunker = new IncrementalSentenceChunker({ maxChars: 120 });
    const got: string[] = [];
    for (const ch of text) got.push(...chunker.feed(ch));
    got.push(...chunker.flush());
    expect(got).toEqual(splitSentences(text, { maxChars: 120 }));
  });

  it('gives the same sentences for random fragment sizes', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (const text of texts) {
      const chunker = new IncrementalSentenceChunker({ maxChars: 120 });
      const got: string[] = [];
      for (let i = 0; i < text.length; ) {
        const n = 1 + Math.floor(rand() * 12);
        got.push(...chunker.feed(text.slice(i, i + n)));
        i += n;
      }
      got.push(...chunker.flush());
      expect(got).toEqual(splitSentences(text, { maxChars: 120 }));
    }
  });

  it('releases a sentence as soon as the next word shows it ended', () => {
    const chunker = new IncrementalSentenceChunker();
    expect(chunker.feed('Hello there.')).toEqual([]);
    expect(chunker.feed(' ')).toEqual([]);
    expect(chunker.feed('N')).toEqual(['Hello there.']);
    expect(chunker.flush()).toEqual(['N']);
  });

  it('keeps a final sentence without punctuation', () => {
    const chunker = new IncrementalSentenceChunker();
    expect(chunker.feed('no punctuation here')).toEqual([]);
    expect(chunker.flush()).toEqual(['no punctuation here']);
    expect(chunker.flush()).toEqual([]);
  });
});
