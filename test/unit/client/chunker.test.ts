import { describe, expect, it } from 'vitest';
import {
  IncrementalSentenceChunker,
  splitSentences,
  type ChunkerOptions,
} from '../../../packages/client/src/index.ts';

/** A seeded generator, so that a failing fragmentation can be reproduced. */
function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

function feedAll(pieces: Iterable<string>, options?: ChunkerOptions): string[] {
  const chunker = new IncrementalSentenceChunker(options);
  const out: string[] = [];
  for (const piece of pieces) out.push(...chunker.feed(piece));
  out.push(...chunker.flush());
  return out;
}

function* randomFragments(text: string, rand: () => number, maxSize: number): Generator<string> {
  for (let i = 0; i < text.length; ) {
    const n = 1 + Math.floor(rand() * maxSize);
    yield text.slice(i, i + n);
    i += n;
  }
}

/** A high surrogate without its low half, or a low one without its high half. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whitespace-free text: chunking may drop and trim whitespace, never anything else. */
const ink = (s: string): string => s.replace(/\s+/g, '');

describe('IncrementalSentenceChunker pitfalls (whole text)', () => {
  const cases = new Map<string, string[]>([
    // stops and what follows them
    ['Hello world. How are you?', ['Hello world.', 'How are you?']],
    ['Really?! Yes. No!', ['Really?!', 'Yes.', 'No!']],
    ['one. two. Three.', ['one. two.', 'Three.']],
    ['He arrived. 42 people waited.', ['He arrived.', '42 people waited.']],
    // decimals, versions, numbers
    ['It costs 3.5 dollars. Cheap!', ['It costs 3.5 dollars.', 'Cheap!']],
    [
      'Pi is about 3.14159 and e is 2.718. Both are irrational.',
      ['Pi is about 3.14159 and e is 2.718.', 'Both are irrational.'],
    ],
    ['It fell .5 percent. Then rose.', ['It fell .5 percent.', 'Then rose.']],
    ['Version v2.0.1 is out. Try it.', ['Version v2.0.1 is out.', 'Try it.']],
    ['Visit example.com today. Thanks.', ['Visit example.com today.', 'Thanks.']],
    ['I have 3. Then more.', ['I have 3.', 'Then more.']],
    // abbreviations and initials
    ['Dr. Smith arrived. He sat down.', ['Dr. Smith arrived.', 'He sat down.']],
    ['Mr. and Mrs. Jones left. Bye.', ['Mr. and Mrs. Jones left.', 'Bye.']],
    ['Bring fruit, e.g. apples. Then leave.', ['Bring fruit, e.g. apples.', 'Then leave.']],
    ['Bring fruit, i.e. Apples and pears. Go.', ['Bring fruit, i.e. Apples and pears.', 'Go.']],
    ['The U.S. Army moved. Fast.', ['The U.S. Army moved.', 'Fast.']],
    ['We met at 10 a.m. Monday. It rained.', ['We met at 10 a.m. Monday.', 'It rained.']],
    ['J. R. R. Tolkien wrote it. Yes.', ['J. R. R. Tolkien wrote it.', 'Yes.']],
    ['It was on Jan. 5 this year. Ok.', ['It was on Jan. 5 this year.', 'Ok.']],
    ['He lives in the U.S.', ['He lives in the U.S.']],
    // ellipses
    ['Wait... what happened? Nothing.', ['Wait... what happened?', 'Nothing.']],
    ['Wait... What happened?', ['Wait...', 'What happened?']],
    ['Well… maybe. Sure.', ['Well… maybe.', 'Sure.']],
    ['Hmm… Fine.', ['Hmm…', 'Fine.']],
    // closing quotes and brackets after the stop
    ['He said "Stop." Then he left.', ['He said "Stop."', 'Then he left.']],
    ['(This is quoted.) Next one.', ['(This is quoted.)', 'Next one.']],
    ['She asked, “Why?” Nobody knew.', ['She asked, “Why?”', 'Nobody knew.']],
    ["'Done!') Then more.", ["'Done!')", 'Then more.']],
    // sentences sent with nothing between them (Pipecat's), and what only looks like that
    ['I can help with that.Your order ships today.', ['I can help with that.', 'Your order ships today.']],
    ['Is that all?Great, thanks!Bye.', ['Is that all?', 'Great, thanks!', 'Bye.']],
    ['Really?!yes', ['Really?!', 'yes']],
    ['He said "hi."Then he left.', ['He said "hi."', 'Then he left.']],
    ['She asked, “Why?”Nobody knew.', ['She asked, “Why?”', 'Nobody knew.']],
    ['It is done.“Next,” she said.', ['It is done.', '“Next,” she said.']],
    ['Wait…What now?', ['Wait…', 'What now?']],
    ['Wait...What now?', ['Wait...', 'What now?']],
    ['Okay.I see.', ['Okay.', 'I see.']],
    ['Bring fruit, e.g.Apples and pears.', ['Bring fruit, e.g.Apples and pears.']],
    ['The U.S.Army moved.', ['The U.S.Army moved.']],
    ['Ask Dr.Smith today.', ['Ask Dr.Smith today.']],
    ['Ask J.Smith today.', ['Ask J.Smith today.']],
    ['Pi is 3.14 today.', ['Pi is 3.14 today.']],
    ['Visit example.com today.', ['Visit example.com today.']],
    ['We use ASP.NET here.', ['We use ASP.NET here.']],
    ['See https://example.com/Docs.Html now.', ['See https://example.com/Docs.Html now.']],
    ['Open example.com/search?q=cats now.', ['Open example.com/search?q=cats now.']],
    ['Open search?query=cats now.', ['Open search?query=cats now.']],
    ['Mail jane@Example.Com today.', ['Mail jane@Example.Com today.']],
    ['wait...what', ['wait...what']],
    // CJK stops, with closers, with Latin text after
    ['你好。今天很好！是吗？', ['你好。', '今天很好！', '是吗？']],
    ['他说：「好。」然后走了。', ['他说：「好。」', '然后走了。']],
    ['こんにちは。Hello there.', ['こんにちは。', 'Hello there.']],
    // newlines
    ['First line\nSecond line', ['First line', 'Second line']],
    ['A list:\n- one\n- two\n\n\nEnd', ['A list:', '- one', '- two', 'End']],
    ['Windows\r\nline ends', ['Windows', 'line ends']],
    // nothing lost, nothing empty
    ['No stop at the end', ['No stop at the end']],
    ['  padded  text  ', ['padded  text']],
    ['  \n  ', []],
    ['', []],
  ]);

  for (const [input, expected] of cases) {
    it(JSON.stringify(input), () => expect(splitSentences(input)).toEqual(expected));
  }

  it('the whole-text cases come out the same character by character and in random fragments', () => {
    const rand = random(11);
    for (const [input, expected] of cases) {
      expect(feedAll(input), input).toEqual(expected);
      for (let round = 0; round < 5; round++) {
        expect(feedAll(randomFragments(input, rand, 6)), input).toEqual(expected);
      }
    }
  });
});

describe('first chunk released early (firstChunkMinChars)', () => {
  const options = { firstChunkMinChars: 20 };
  const cases = new Map<string, string[]>([
    // a long opening sentence: cut at its first clause mark past 20 characters, then whole sentences
    [
      'Well, I was thinking about what you said yesterday, and you are right, as usual. Let us go, then.',
      [
        'Well, I was thinking about what you said yesterday,',
        'and you are right, as usual.',
        'Let us go, then.',
      ],
    ],
    // a short first sentence ends before any qualifying clause mark: no early cut at all
    [
      'Hi, there. I was thinking about what you said yesterday, and you are right.',
      ['Hi, there.', 'I was thinking about what you said yesterday, and you are right.'],
    ],
    // each kind of clause mark
    [
      'The first thing we need; the second thing later. Ok.',
      ['The first thing we need;', 'the second thing later.', 'Ok.'],
    ],
    ['Here is the thing I meant: it works now. Ok.', ['Here is the thing I meant:', 'it works now.', 'Ok.']],
    [
      'The plan we made together—simple as it was—worked. Ok.',
      ['The plan we made together—', 'simple as it was—worked.', 'Ok.'],
    ],
    [
      'The plan we made together – simple as it was – worked.',
      ['The plan we made together –', 'simple as it was – worked.'],
    ],
    [
      'The plan we made together - simple as it was - worked.',
      ['The plan we made together -', 'simple as it was - worked.'],
    ],
    ['The plan we made together -- simple as it was.', ['The plan we made together --', 'simple as it was.']],
    [
      '我们今天下午和朋友们一起去了那个非常大的公园，天气非常好。然后回家了。',
      ['我们今天下午和朋友们一起去了那个非常大的公园，', '天气非常好。', '然后回家了。'],
    ],
    // a closing quote after the mark stays with the first chunk
    [
      '"I would rather not do that," he said slowly. Ok.',
      ['"I would rather not do that,"', 'he said slowly.', 'Ok.'],
    ],
    // not clause marks: thousands separators, times, ranges, hyphenated words
    [
      'We sold 3,000 units at 10:30 during 1990–2000 in well-known shops, all of them. Ok.',
      ['We sold 3,000 units at 10:30 during 1990–2000 in well-known shops,', 'all of them.', 'Ok.'],
    ],
    // a first sentence with no clause mark is released whole
    [
      'A long first sentence without any clause marks at all. Then, more.',
      ['A long first sentence without any clause marks at all.', 'Then, more.'],
    ],
    // a trailing clause mark at the end of the input is just the end
    ['One long clause that ends the input here,', ['One long clause that ends the input here,']],
    // never inside a number written with a spaced separator
    [
      'The total came to 12, 345 dollars in the end, which surprised us. Ok.',
      ['The total came to 12, 345 dollars in the end,', 'which surprised us.', 'Ok.'],
    ],
    // never right after an abbreviation's period
    [
      'We need several things like fruit e.g., apples and pears, and water. Ok.',
      ['We need several things like fruit e.g., apples and pears,', 'and water.', 'Ok.'],
    ],
    // never inside a quotation: curly, guillemets, straight
    [
      'She told us “Stop, please, and wait right there,” and then she left. Ok.',
      ['She told us “Stop, please, and wait right there,”', 'and then she left.', 'Ok.'],
    ],
    [
      'He kept on saying «maybe, maybe not, who knows» all evening long, sadly. Ok.',
      ['He kept on saying «maybe, maybe not, who knows» all evening long,', 'sadly.', 'Ok.'],
    ],
    [
      'He kept on saying "maybe, maybe not, who knows" all evening long, sadly. Ok.',
      ['He kept on saying "maybe, maybe not, who knows" all evening long,', 'sadly.', 'Ok.'],
    ],
    // a very short first sentence is released whole, and the next is not cut early
    [
      'Yes. Well, I was thinking about it all day long, and you are right.',
      ['Yes.', 'Well, I was thinking about it all day long, and you are right.'],
    ],
    // CJK: the ideographic comma is a clause mark too
    [
      '我们今天下午和朋友们一起去了那个非常大的公园、天气非常好。然后回家了。',
      ['我们今天下午和朋友们一起去了那个非常大的公园、', '天气非常好。', '然后回家了。'],
    ],
  ]);

  for (const [input, expected] of cases) {
    it(JSON.stringify(input), () => expect(splitSentences(input, options)).toEqual(expected));
  }

  it('off by default: the same texts split at sentence stops only', () => {
    expect(
      splitSentences(
        'Well, I was thinking about what you said yesterday, and you are right, as usual. Let us go, then.',
      ),
    ).toEqual([
      'Well, I was thinking about what you said yesterday, and you are right, as usual.',
      'Let us go, then.',
    ]);
  });

  it('releases only the first chunk of a stream early, and again after reset() or flush()', () => {
    const chunker = new IncrementalSentenceChunker(options);
    const text = 'Long opening words of the reply, and the rest of it. Second sentence here, with a comma. ';
    expect(chunker.feed(text)).toEqual([
      'Long opening words of the reply,',
      'and the rest of it.',
      // not the first chunk any more: no early cut in the second sentence
    ]);
    expect(chunker.feed('Next')).toEqual(['Second sentence here, with a comma.']);
    chunker.reset();
    expect(chunker.feed(text)).toEqual(['Long opening words of the reply,', 'and the rest of it.']);
    expect(chunker.flush()).toEqual(['Second sentence here, with a comma.']);
    expect(chunker.feed(text)).toEqual(['Long opening words of the reply,', 'and the rest of it.']);
  });

  it('releases the first chunk as soon as the space after the clause mark arrives', () => {
    const chunker = new IncrementalSentenceChunker(options);
    expect(chunker.feed('Long opening words of the reply')).toEqual([]);
    expect(chunker.feed(',')).toEqual([]); // "3,000" would not be a clause: wait for the next character
    expect(chunker.feed(' ')).toEqual(['Long opening words of the reply,']);
    expect(chunker.feed('and more')).toEqual([]);
    expect(chunker.flush()).toEqual(['and more']);
  });

  it('gives the same chunks character by character and in random fragments', () => {
    const rand = random(5);
    for (const [input, expected] of cases) {
      expect(feedAll(input, options), input).toEqual(expected);
      for (let round = 0; round < 5; round++) {
        expect(feedAll(randomFragments(input, rand, 7), options), input).toEqual(expected);
      }
    }
  });
});

describe('long sentences (maxChars)', () => {
  it('cuts at the last clause mark before the limit', () => {
    const long = `${'word '.repeat(30)}and then, ${'more '.repeat(30)}end.`;
    const parts = splitSentences(long, { maxChars: 200 });
    expect(parts[0]).toBe(`${'word '.repeat(30)}and then,`);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(200);
    expect(ink(parts.join(''))).toBe(ink(long));
  });

  it('cuts at the last space when there is no clause mark', () => {
    const long = 'abcd '.repeat(30); // 150 characters
    const parts = splitSentences(long, { maxChars: 42 });
    expect(parts).toEqual([
      'abcd abcd abcd abcd abcd abcd abcd abcd',
      ...splitSentences('abcd '.repeat(22), { maxChars: 42 }),
    ]);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(42);
  });

  it('cuts at the limit when there is no space, never inside a surrogate pair', () => {
    const blob = 'x'.repeat(1000);
    const parts = splitSentences(blob, { maxChars: 300 });
    expect(parts).toEqual(['x'.repeat(300), 'x'.repeat(300), 'x'.repeat(300), 'x'.repeat(100)]);
    const emoji = '😀'.repeat(20);
    const cut = splitSentences(emoji, { maxChars: 9 });
    expect(cut.join('')).toBe(emoji);
    for (const p of cut) expect(p.length).toBeLessThanOrEqual(9);
    for (const p of cut) expect(p).not.toMatch(LONE_SURROGATE);
  });

  it('does not take "3,000" or "10:30" for a clause', () => {
    const parts = splitSentences('We counted 3,000 of them at 10:30 and wrote it down', { maxChars: 24 });
    expect(parts).toEqual(['We counted 3,000 of them', 'at 10:30 and wrote it', 'down']);
  });

  it('keeps sentences within the limit untouched', () => {
    expect(splitSentences('Short one, here. Another, there.', { maxChars: 20 })).toEqual([
      'Short one, here.',
      'Another, there.',
    ]);
  });

  it('refuses nonsense limits', () => {
    expect(() => new IncrementalSentenceChunker({ maxChars: 3 })).toThrow(/maxChars/);
    expect(() => new IncrementalSentenceChunker({ maxChars: Number.NaN })).toThrow(/maxChars/);
    expect(() => new IncrementalSentenceChunker({ firstChunkMinChars: -1 })).toThrow(/firstChunkMinChars/);
  });
});

describe('flush semantics', () => {
  it('holds the tail until flush, so a final sentence without a stop is not lost', () => {
    const chunker = new IncrementalSentenceChunker();
    expect(chunker.feed('First one. And the last one without a stop')).toEqual(['First one.']);
    expect(chunker.buffered).toBe('And the last one without a stop');
    expect(chunker.flush()).toEqual(['And the last one without a stop']);
    expect(chunker.flush()).toEqual([]);
    expect(chunker.buffered).toBe('');
  });

  it('waits for the next word to decide a stop, and lets flush decide at the end', () => {
    const chunker = new IncrementalSentenceChunker();
    expect(chunker.feed('See Dr.')).toEqual([]);
    expect(chunker.feed(' ')).toEqual([]);
    expect(chunker.feed('Smith. ')).toEqual([]); // "Dr. Smith": no boundary; "Smith." awaits its follower
    expect(chunker.feed('He')).toEqual(['See Dr. Smith.']);
    expect(chunker.flush()).toEqual(['He']);
  });

  it('releases a sentence at a line break without waiting for more', () => {
    const chunker = new IncrementalSentenceChunker();
    expect(chunker.feed('A heading\n')).toEqual(['A heading']);
  });

  it('flushes a pending stop, closers and whitespace-only input correctly', () => {
    const chunker = new IncrementalSentenceChunker();
    expect(chunker.feed('He said "Stop.')).toEqual([]);
    expect(chunker.feed('"')).toEqual([]);
    expect(chunker.flush()).toEqual(['He said "Stop."']);
    expect(chunker.feed('   \n\n  ')).toEqual([]);
    expect(chunker.flush()).toEqual([]);
  });
});

describe('equivalence: whole = character by character = random fragments', () => {
  // Tricky pieces, glued at random, give texts that hit every rule and its boundaries.
  const pieces = [
    'Dr.',
    'Mr.',
    'e.g.',
    'U.S.',
    'a.m.',
    'J.',
    '3.5',
    '3,000',
    '10:30',
    '1990–2000',
    'well-known',
    'word',
    'Word',
    'the',
    'It',
    '42',
    'example.com',
    'ASP.NET',
    'search?q=1',
    'a/b?c',
    'Your',
    '“',
    'x',
    '.',
    '!',
    '?',
    '?!',
    '...',
    '…',
    ',',
    ';',
    ':',
    '—',
    ' – ',
    ' - ',
    ' -- ',
    '"',
    '”',
    ')',
    '」',
    '。',
    '！',
    '，',
    '你好',
    ' ',
    ' ',
    ' ',
    ' ',
    '  ',
    '\n',
    '\n\n',
    '\r\n',
    '😀',
  ];
  const optionSets: ChunkerOptions[] = [
    {},
    { maxChars: 40 },
    { maxChars: 24, firstChunkMinChars: 8 },
    { firstChunkMinChars: 1 },
    { maxChars: 60, firstChunkMinChars: 30 },
  ];

  const rand = random(2024);
  const texts = Array.from({ length: 200 }, () =>
    Array.from(
      { length: 5 + Math.floor(rand() * 60) },
      () => pieces[Math.floor(rand() * pieces.length)]!,
    ).join(''),
  );
  texts.push(
    'Mr. and Mrs. Jones paid $3.50 at 10:30 a.m. on Jan. 5. They left! "Why?" she asked… Nobody knew.\nNew paragraph here',
    `${'A fairly long clause, '.repeat(40)}and a final one. Short.`,
  );

  for (const options of optionSets) {
    it(`holds for ${texts.length} generated texts with ${JSON.stringify(options)}`, () => {
      const fragmentRand = random(99);
      for (const text of texts) {
        const whole = splitSentences(text, options);
        expect(feedAll(text, options), JSON.stringify(text)).toEqual(whole);
        expect(feedAll([...text], options), JSON.stringify(text)).toEqual(whole); // code point by code point
        expect(feedAll(text.split(''), options), JSON.stringify(text)).toEqual(whole); // UTF-16 unit by unit
        expect(feedAll(randomFragments(text, fragmentRand, 9), options), JSON.stringify(text)).toEqual(whole);
        // nothing lost, nothing empty, nothing too long
        expect(ink(whole.join(''))).toBe(ink(text));
        for (const chunk of whole) {
          expect(chunk).toBe(chunk.trim());
          expect(chunk.length).toBeGreaterThan(0);
          expect(chunk.length).toBeLessThanOrEqual(options.maxChars ?? 400);
        }
      }
    });
  }
});
