/**
 * The English tokenizer against spaCy's whitespace handling (`spacy/tests/tokenizer/test_whitespace.py`,
 * `spacy/tests/lang/en/test_text.py`): each token with its `whitespace_`, and whitespace as tokens.
 */
import { describe, expect, it } from 'vitest';
import { tokenize } from '../../../model/text/en/tokenizer.ts';

const texts = (text: string): string[] => tokenize(text).map((t) => t.text);

const WHITESPACE = new Map<string, [string, string][]>([
  [
    'lorem ipsum',
    [
      ['lorem', ' '],
      ['ipsum', ''],
    ],
  ],
  [
    'lorem  ipsum',
    [
      ['lorem', ' '],
      [' ', ''],
      ['ipsum', ''],
    ],
  ],
  [
    'lorem ipsum  ',
    [
      ['lorem', ' '],
      ['ipsum', ' '],
      [' ', ''],
    ],
  ],
  [
    'lorem\nipsum',
    [
      ['lorem', ''],
      ['\n', ''],
      ['ipsum', ''],
    ],
  ],
  [
    'lorem \nipsum',
    [
      ['lorem', ' '],
      ['\n', ''],
      ['ipsum', ''],
    ],
  ],
  [
    'lorem  \nipsum',
    [
      ['lorem', ' '],
      [' \n', ''],
      ['ipsum', ''],
    ],
  ],
  [
    'lorem \n ipsum',
    [
      ['lorem', ' '],
      ['\n ', ''],
      ['ipsum', ''],
    ],
  ],
  [
    '   This is a cat.',
    [
      ['   ', ''],
      ['This', ' '],
      ['is', ' '],
      ['a', ' '],
      ['cat', ''],
      ['.', ''],
    ],
  ],
  [
    'This is a string ',
    [
      ['This', ' '],
      ['is', ' '],
      ['a', ' '],
      ['string', ' '],
    ],
  ],
  [
    'aaabbb@ccc.com\nThank you!',
    [
      ['aaabbb@ccc.com', ''],
      ['\n', ''],
      ['Thank', ' '],
      ['you', ''],
      ['!', ''],
    ],
  ],
  [
    'aaabbb@ccc.com \nThank you!',
    [
      ['aaabbb@ccc.com', ' '],
      ['\n', ''],
      ['Thank', ' '],
      ['you', ''],
      ['!', ''],
    ],
  ],
  [' ', [[' ', '']]],
  ['  ', [['  ', '']]],
  ['\n', [['\n', '']]],
  [
    'a\tb',
    [
      ['a', ''],
      ['\t', ''],
      ['b', ''],
    ],
  ],
  [
    'a \u00a0b',
    [
      ['a', ' '],
      ['\u00a0', ''],
      ['b', ''],
    ],
  ],
  [
    'Hi !',
    [
      ['Hi', ' '],
      ['!', ''],
    ],
  ],
  [
    '\u3000x',
    [
      ['\u3000', ''],
      ['x', ''],
    ],
  ],
  ['a\u200bb', [['a\u200bb', '']]],
  [
    'end. ',
    [
      ['end', ''],
      ['.', ' '],
    ],
  ],
  [
    "Don't go!",
    [
      ['Do', ''],
      ["n't", ' '],
      ['go', ''],
      ['!', ''],
    ],
  ],
]);
/** spaCy's own oddities, kept: misaki's lexicon was looked up with these tokens. */

describe('tokenize: whitespace', () => {
  for (const [input, expected] of WHITESPACE) {
    it(JSON.stringify(input), () => {
      expect(tokenize(input).map((t) => [t.text, t.whitespace])).toEqual(expected);
    });
  }

  it('returns no tokens for no text', () => expect(tokenize('')).toEqual([]));

  it('counts 76 tokens in the long text of test_text.py', () => {
    const text = `Tributes pour in for late British Labour Party leader

Tributes poured in from around the world Thursday
to the late Labour Party leader John Smith, who died earlier from a massive
heart attack aged 55.

In Washington, the US State Department issued a statement regretting "the
untimely death" of the rapier-tongued Scottish barrister and parliamentarian.

"Mr. Smith, throughout his distinguished`;
    expect(tokenize(text)).toHaveLength(76);
  });

  it('splits the emoticons of the Tweebo challenge (test_exceptions.py)', () => {
    const text = `:o :/ :'( >:o (: :) >.< XD -__- o.O ;D :-) @_@ :P 8D :1 >:( :D =| :> ....`;
    expect(texts(text)).toEqual(text.split(' '));
  });
});
