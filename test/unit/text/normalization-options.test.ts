/**
 * The normalizer's switches (Kokoro-FastAPI's `normalization_options`): each switch on and off on
 * English, `normalize: false` on every language, the wire parser and its errors, and that the
 * defaults read exactly as a call without options does.
 */
import { describe, expect, it } from 'vitest';
import { cpuRatio } from './cpu-time.ts';
import type { LanguageCode } from '../../../model/kokoro/constants.ts';
import {
  DEFAULT_NORMALIZATION,
  NORMALIZATION_FIELDS,
  parseNormalizationOptions,
  type NormalizationOptions,
} from '../../../model/text/normalization-options.ts';
import { normalizeText } from '../../../model/text/normalize.ts';
import { normalizeFor } from '../../../model/text/languages/index.ts';
import { TtsError } from '../../../protocol/errors.ts';
import { CORPORA, corpus } from '../../../scripts/lib/corpora.ts';

type Field = keyof NormalizationOptions;
/** Input → [expected with the switch on, expected with it off]; the other switches at their defaults. */
type Cases = readonly (readonly [input: string, on: string, off: string])[];

const SWITCHES = new Map<Field, Cases>([
  [
    'unitNormalization',
    [
      ['It is 5 km away.', 'It is five kilometers away.', 'It is 5 km away.'],
      ['It weighs 10KB.', 'It weighs ten kilobytes.', 'It weighs 10KB.'],
      ['25°C outside', 'twenty-five degrees Celsius outside', '25°C outside'],
      ['3 m² of floor', 'three square meters of floor', '3 m² of floor'],
      // A magnitude is not a unit: read either way.
      ['10k steps', 'ten thousand steps', 'ten thousand steps'],
    ],
  ],
  [
    'urlNormalization',
    [
      [
        'Visit https://example.com/path now.',
        'Visit https example dot com slash path now.',
        'Visit https://example.com/path now.',
      ],
      [
        'See https://www.example.com:8080/a_b?x=1&y=%20 today.',
        'See https www dot example dot com colon 8080 slash a underscore b question mark x equals 1 ampersand y equals percent 20 today.',
        'See https://www.example.com:8080/a_b?x=1&y=%20 today.',
      ],
      [
        'See www.example.com/page-2, then',
        'See www example dot com slash page dash 2, then',
        'See www.example.com/page-2, then',
      ],
      [
        'Open www.example.com/index.html.',
        'Open www example dot com slash index dot html.',
        'Open www.example.com/index.html.',
      ],
      ['Visit example.com now.', 'Visit example dot com now.', 'Visit example.com now.'],
      ['Try localhost:3000/api', 'Try localhost colon 3000 slash api', 'Try localhost:3000/api'],
      ['Server 192.168.0.1 is up.', 'Server 192 dot 168 dot 0 dot 1 is up.', 'Server 192.168.0.1 is up.'],
      ['https://user@example.com', 'https user at example dot com', 'https://user@example.com'],
      // Not URLs: a TLD in capitals after a missing space, an unknown TLD, a version.
      ['Go to bed.It was late.', 'Go to bed.It was late.', 'Go to bed.It was late.'],
      ['Use node.js here.', 'Use node.js here.', 'Use node.js here.'],
      ['Version 1.2.3 and v2.0.', 'Version 1.2.3 and v2.0.', 'Version 1.2.3 and v2.0.'],
    ],
  ],
  [
    'emailNormalization',
    [
      [
        'Mail jane.doe+tag@example.co.uk now',
        'Mail jane dot doe plus tag at example dot co dot uk now',
        'Mail jane.doe+tag@example.co.uk now',
      ],
      [
        'Write to first_last-name@my-site.org.',
        'Write to first underscore last dash name at my-site dot org.',
        'Write to first_last-name@my-site.org.',
      ],
      // An address inside a URL is the URL's (left as written while URLs are).
      ['https://user@example.com', 'https://user@example.com', 'https://user@example.com'],
    ],
  ],
  [
    'optionalPluralizationNormalization',
    [
      ['The file(s) are here.', 'The files are here.', 'The file(s) are here.'],
      ['Check the ITEM(S).', 'Check the ITEMS.', 'Check the ITEM(S).'],
      ['A lone (s) stays.', 'A lone (s) stays.', 'A lone (s) stays.'],
    ],
  ],
  [
    'phoneNormalization',
    [
      [
        'Call 555-123-4567 now.',
        'Call five five five, one two three, four five six seven now.',
        'Call 555-123-4567 now.',
      ],
      [
        '+44 20 7946 0958',
        'plus four four, two zero, seven nine four six, zero nine five eight',
        'plus 44 20 7946 0958',
      ],
      // Off, the digits meet the other rules, as in Kokoro-FastAPI (which also reads a range here).
      [
        'Call (555) 123-4567.',
        'Call five five five, one two three, four five six seven.',
        'Call (555) 123 to 4567.',
      ],
    ],
  ],
  [
    'replaceRemainingSymbols',
    [
      ['a+b=c', 'a plus b equals c', 'a+b=c'],
      ['x = 5, 2+2', 'x equals 5, 2 plus 2', 'x equals 5, 2 plus 2'],
      ['x<y>z, a <= b', 'x less than y greater than z, a less than or equal to b', 'x<y>z, a <= b'],
      ['and/or', 'and slash or', 'and/or'],
      ['snake_case *bold*, C#', 'snake case bold, C number', 'snake_case *bold*, C#'],
      ['$5 or $ later', '$5 or dollar later', '$5 or $ later'],
      ['100% | 5% off', 'one hundred percent five percent off', 'one hundred percent | five percent off'],
      // Read whatever the switch: the normalizer's own symbols.
      ['A & B @ home, #1, ~5', 'A and B at home, number 1, about 5', 'A and B at home, number 1, about 5'],
    ],
  ],
]);

describe.each([...SWITCHES])('%s (English)', (field, cases) => {
  const on = { ...DEFAULT_NORMALIZATION, [field]: true };
  const off = { ...DEFAULT_NORMALIZATION, [field]: false };
  it.each(cases)('%s', (input, expectedOn, expectedOff) => {
    expect(normalizeFor(input, 'a', on)).toBe(expectedOn);
    expect(normalizeFor(input, 'a', off)).toBe(expectedOff);
    expect(normalizeFor(input, 'b', on)).toBe(expectedOn);
  });
});

describe('normalizeText without misaki takes the same switches', () => {
  it.each([
    [{ unitNormalization: false }, 'It is 5 km away.', 'It is five km away.'],
    [{ replaceRemainingSymbols: true }, 'Pay $5 & go/stay', 'Pay five dollars and go slash stay'],
    [{ urlNormalization: true }, 'See example.com:8080', 'See example dot com colon eight thousand eighty'],
    [{ normalize: false }, '  It is  5 km\taway. ', 'It is 5 km away.'],
  ] as const)('%o: %s', (switches, input, expected) => {
    expect(normalizeText(input, 'a', switches)).toBe(expected);
  });
});

describe('normalize: false', () => {
  const asWritten = { ...DEFAULT_NORMALIZATION, normalize: false };
  it.each([
    [
      'a',
      'Dr. Smith paid $5 at 3:30 pm  on\t1/2/2024 \u2014 see https://x.com!',
      'Dr. Smith paid $5 at 3:30 pm on 1/2/2024 \u2014 see https://x.com!',
    ],
    [
      'b',
      'file(s) \u201Cquoted\u201D\u2026 5 km, 555-123-4567',
      'file(s) \u201Cquoted\u201D\u2026 5 km, 555-123-4567',
    ],
    ['a', 'a\u0000b\r\n\r\n  c\u200B ', 'ab\nc'],
    ['e', 'Cuesta 12,50 \u20AC, \u00BFs\u00ED?', 'Cuesta 12,50 \u20AC, \u00BFs\u00ED?'],
    ['f', '\u00AB Bonjour \u00BB, 1.250 euros', '\u00AB Bonjour \u00BB, 1.250 euros'],
    [
      'h',
      '\u0967\u0968 \u0930\u0941\u092A\u092F\u0947\u0964',
      '\u0967\u0968 \u0930\u0941\u092A\u092F\u0947\u0964',
    ],
    ['j', '3\u65E5\u3002', '3\u65E5\u3002'],
    ['z', '12.5\u5143\u3002', '12.5\u5143\u3002'],
  ] as const)('%s: %s', (lang, input, expected) => {
    expect(normalizeFor(input, lang, asWritten)).toBe(expected);
  });

  it('overrides every other switch', () => {
    const everything = { ...asWritten, urlNormalization: true, replaceRemainingSymbols: true };
    expect(normalizeFor('file(s) at a@b.com & 5 km', 'a', everything)).toBe('file(s) at a@b.com & 5 km');
  });

  it('still refuses a language it has no front end for', () => {
    expect(() => normalizeFor('x', 'q' as 'a', asWritten)).toThrow(/No normalization for language 'q'/);
  });
});

/* ------------------------------------------------------------------------------------------------
 * Defaults: a request without the field reads exactly as before
 * ---------------------------------------------------------------------------------------------- */

/** English beyond the benchmark sentences: every kind of thing a switch touches. */
const ENGLISH = [
  ...corpus('en'),
  'Dr. Smith paid $5.99 on 3/4/2024 at 3:30 pm, about 20% more than in the 1990s.',
  'Call 555-123-4567 or +44 20 7946 0958; the office is 5 km away and 25\u00B0C inside.',
  'Visit https://example.com/a?b=1&c=2 or www.example.org, or mail jane.doe+tag@example.co.uk.',
  'The file(s) on example.com weigh 10KB; a+b=c, x<y, and/or, snake_case, *bold*, C#.',
  'Version 1.2.3 of v2.0 runs on 192.168.0.1 \u2014 R&D @ noon, #1, ~5 people\u2026',
];

const LANGS = Object.entries(CORPORA) as [string, LanguageCode][];
const SAMPLE: [LanguageCode, string][] = [
  ...ENGLISH.flatMap((s): [LanguageCode, string][] => [
    ['a', s],
    ['b', s],
  ]),
  ...LANGS.flatMap(([name, lang]) => corpus(name).map((s): [LanguageCode, string] => [lang, s])),
];

/** Every wire field at our default, sent explicitly. */
const EXPLICIT_DEFAULTS = Object.fromEntries(
  Object.entries(NORMALIZATION_FIELDS).map(([wire, field]) => [wire, DEFAULT_NORMALIZATION[field]]),
);

describe('the defaults', () => {
  it('read byte for byte as a call without options, on a varied sample of every language', () => {
    expect(SAMPLE.length).toBeGreaterThan(350);
    const parsed = [
      parseNormalizationOptions(undefined),
      parseNormalizationOptions(null),
      parseNormalizationOptions({}),
      parseNormalizationOptions(EXPLICIT_DEFAULTS),
    ];
    for (const [lang, sentence] of SAMPLE) {
      const plain = normalizeFor(sentence, lang);
      expect(normalizeFor(sentence, lang, DEFAULT_NORMALIZATION), sentence).toBe(plain);
      for (const options of parsed) expect(normalizeFor(sentence, lang, options), sentence).toBe(plain);
      if (lang === 'a' || lang === 'b') {
        expect(normalizeText(sentence, lang, { misaki: true }), sentence).toBe(plain);
        expect(normalizeText(sentence, lang, { ...DEFAULT_NORMALIZATION }), sentence).toBe(
          normalizeText(sentence, lang),
        );
      }
    }
  });

  it('are what a request without the field got before: units and phones read, URLs, plurals and stray symbols as written', () => {
    expect(DEFAULT_NORMALIZATION).toEqual({
      normalize: true,
      unitNormalization: true,
      urlNormalization: false,
      emailNormalization: false,
      optionalPluralizationNormalization: false,
      phoneNormalization: true,
      replaceRemainingSymbols: false,
    });
    expect(Object.isFrozen(DEFAULT_NORMALIZATION)).toBe(true);
  });

  it('are the only switches that matter outside English: the rest change nothing in the other languages', () => {
    const flipped = Object.fromEntries(
      Object.entries(DEFAULT_NORMALIZATION).map(([k, v]) => [k, k === 'normalize' ? v : !v]),
    ) as unknown as NormalizationOptions;
    for (const [lang, sentence] of SAMPLE)
      if (lang !== 'a' && lang !== 'b')
        expect(normalizeFor(sentence, lang, flipped), sentence).toBe(normalizeFor(sentence, lang));
  });
});

/* ------------------------------------------------------------------------------------------------
 * The wire object
 * ---------------------------------------------------------------------------------------------- */

describe('parseNormalizationOptions', () => {
  it('knows exactly Kokoro-FastAPI’s seven fields, one for each switch', () => {
    expect(Object.keys(NORMALIZATION_FIELDS)).toEqual([
      'normalize',
      'unit_normalization',
      'url_normalization',
      'email_normalization',
      'optional_pluralization_normalization',
      'phone_normalization',
      'replace_remaining_symbols',
    ]);
    expect(Object.values(NORMALIZATION_FIELDS).sort()).toEqual(Object.keys(DEFAULT_NORMALIZATION).sort());
  });

  it('takes Kokoro-FastAPI’s own defaults, sent in full', () => {
    const fastapi = {
      normalize: true,
      unit_normalization: false,
      url_normalization: true,
      email_normalization: true,
      optional_pluralization_normalization: true,
      phone_normalization: true,
      replace_remaining_symbols: true,
    };
    expect(parseNormalizationOptions(fastapi)).toEqual({
      normalize: true,
      unitNormalization: false,
      urlNormalization: true,
      emailNormalization: true,
      optionalPluralizationNormalization: true,
      phoneNormalization: true,
      replaceRemainingSymbols: true,
    });
  });

  it('fills a field left out with its default, and freezes the result', () => {
    const parsed = parseNormalizationOptions({ unit_normalization: false, url_normalization: true });
    expect(parsed).toEqual({ ...DEFAULT_NORMALIZATION, unitNormalization: false, urlNormalization: true });
    expect(Object.isFrozen(parsed)).toBe(true);
    expect(parseNormalizationOptions(undefined)).toBe(DEFAULT_NORMALIZATION);
    expect(parseNormalizationOptions(null)).toBe(DEFAULT_NORMALIZATION);
  });

  const FIELDS = Object.keys(NORMALIZATION_FIELDS).join(', ');
  it.each([
    ['yes', 'normalization_options should be an object of true/false switches; got the string "yes"'],
    [[], 'normalization_options should be an object of true/false switches; got an array'],
    [true, 'normalization_options should be an object of true/false switches; got boolean true'],
    [{ units: true }, `normalization_options has no field "units". Should be one of: ${FIELDS}`],
    [
      { unitNormalization: true },
      `normalization_options has no field "unitNormalization". Should be one of: ${FIELDS}`,
    ],
    [
      JSON.parse('{"__proto__": true}'),
      `normalization_options has no field "__proto__". Should be one of: ${FIELDS}`,
    ],
    [{ toString: true }, `normalization_options has no field "toString". Should be one of: ${FIELDS}`],
    [
      { normalize: 'false' },
      'normalization_options.normalize should be true or false; got the string "false"',
    ],
    [
      { phone_normalization: 1 },
      'normalization_options.phone_normalization should be true or false; got number 1',
    ],
    [
      { url_normalization: null },
      'normalization_options.url_normalization should be true or false; got null',
    ],
    [
      { replace_remaining_symbols: {} },
      'normalization_options.replace_remaining_symbols should be true or false; got an object',
    ],
  ] as const)('refuses %j', (value, message) => {
    let caught: unknown;
    try {
      parseNormalizationOptions(value);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(TtsError);
    const err = caught as TtsError;
    expect(err.message).toBe(message);
    expect(err.key).toBe('TTS_ERR_INVALID_OPTION');
    expect(err.code).toBe('invalid_option');
    expect(err.status).toBe(400);
    expect(err.data.param).toBe('normalization_options');
  });
});

/* ------------------------------------------------------------------------------------------------
 * With every reader on, the normalizer stays linear (as in linear-time.test.ts)
 * ---------------------------------------------------------------------------------------------- */

const EVERYTHING_ON: NormalizationOptions = {
  ...DEFAULT_NORMALIZATION,
  urlNormalization: true,
  emailNormalization: true,
  optionalPluralizationNormalization: true,
  replaceRemainingSymbols: true,
};

const FLOODS: Record<string, (n: number) => string> = {
  'dotted labels': (n) => 'a.'.repeat(n / 2),
  'dotted labels before @': (n) => `${'a.'.repeat(n / 2)}@`,
  'digits and dots': (n) => '1.'.repeat(n / 2),
  'a URL of dots': (n) => `http://${'.'.repeat(n)}`,
  'at signs': (n) => 'a@'.repeat(n / 2),
  'hyphenated labels': (n) => 'a-'.repeat(n / 2),
  'plurals in parentheses': (n) => 'x(s)'.repeat(n / 4),
  comparisons: (n) => 'a<'.repeat(n / 2),
  symbols: (n) => '*_/'.repeat(n / 3),
};

describe('with every switch on, the English normalizer', () => {
  it.each(Object.entries(FLOODS))('grows linearly on %s (100 KB / 10 KB ≤ 30)', (_name, make) => {
    const parse = (input: string) => normalizeFor(input, 'a', EVERYTHING_ON);
    const small = make(10_000);
    const large = make(100_000);
    parse(small);
    const ratio = cpuRatio(
      () => parse(large),
      () => parse(small),
      30,
    );
    expect(ratio).toBeLessThanOrEqual(30);
  });
});
