/**
 * English text normalization before phonemization: turns written forms (numbers, money, times,
 * dates, units, abbreviations, symbols, typographic punctuation) into words that espeak-ng reads
 * well. Pure and synchronous; every regex is compiled once at module load.
 *
 * American (`a`) and British (`b`) output differ only in:
 * - "and" inside numbers: British "one hundred and five", "two thousand and five" (years too);
 *   American "one hundred five", "two thousand five".
 * - Numeric dates: `3/4/2024` is March 4 in American, 3 April in British (either falls back to the
 *   other order when its own is impossible, e.g. `25/12/2024`). Dates are read "January fifteenth,
 *   twenty twenty-four" (American) and "the fifteenth of January, twenty twenty-four" (British).
 *
 * Characters, protected spans and abbreviations are handled here; numbers in normalize-numbers.ts;
 * the tables and readers both use in normalize-words.ts.
 */
import { DEFAULT_NORMALIZATION, type NormalizationOptions } from './normalization-options.ts';
import { normalizeNumbers, type NumberSwitches } from './normalize-numbers.ts';
import { atTextEnd, continuesSentence } from './normalize-words.ts';

export {
  digitsToWords,
  integerToWords,
  numberToWords,
  numeralToWords,
  toOrdinalWords,
  yearToWords,
  type NumberWordsOptions,
} from './numbers.ts';

/** Kokoro's English language codes: `a` American, `b` British. */
export type EnglishLang = 'a' | 'b';

/* ------------------------------------------------------------------------------------------------
 * Characters
 * ---------------------------------------------------------------------------------------------- */

// eslint-disable-next-line no-control-regex -- stripping control characters is the point
const CONTROL = /[\u0000-\u0008\u000E-\u001F\u007F-\u009F\u00AD\u200B-\u200D\u2060\uFEFF]/g;

/** Typographic and CJK punctuation → forms in Kokoro's vocabulary or plain ASCII. */
// prettier-ignore
const CHAR_MAP: Readonly<Record<string, string>> = {
  '\u2018': "'", '\u2019': "'", '\u201A': "'", '\u201B': "'", '\u2032': "'", '\u2039': "'", '\u203A': "'",
  '\u00AB': '\u201C', '\u00BB': '\u201D', '\u201E': '\u201C', '\u201F': '\u201D', '\u300C': '\u201C',
  '\u300D': '\u201D', '\u300E': '\u201C', '\u300F': '\u201D', '\u301D': '\u201C', '\u301E': '\u201D',
  '\u2033': '"', '\uFF02': '"', '\u3001': ', ', '\uFF0C': ', ', '\u3002': '. ', '\uFF0E': '. ',
  '\uFF01': '! ', '\uFF1F': '? ', '\uFF1A': ': ', '\uFF1B': '; ', '\uFF08': ' (', '\uFF09': ') ',
  '\u2010': '-', '\u2011': '-', '\u2212': '-', '\u2012': '\u2013', '\u2015': '\u2014', '\u22EF': '\u2026',
};
const CHARS =
  /[\u2018\u2019\u201A\u201B\u2032\u2039\u203A\u00AB\u00BB\u201E\u201F\u300C-\u300F\u301D\u301E\u2033\u3001\u3002\u2010\u2011\u2212\u2012\u2015\u22EF\uFF01-\uFF5E]/g;

/** Thin, narrow and no-break spaces used as thousands separators: `10 000` → `10000`. */
const DIGIT_GROUP_SPACE = /(?<=\d)[\u00A0\u2009\u202F](?=\d{3}(?!\d))/g;
const LINE_BREAKS = /\r\n?|[\u2028\u2029\u0085]/g;
const SPACES = /[^\S\n]+/g;
const NEWLINES = / ?\n[\s]*/g;
const DOTS = /\.{3,}/g;
const DOUBLE_HYPHEN = /(?<!-)-{2,3}(?!-)/g;

/**
 * Line breaks, control characters, typographic and full-width punctuation, digit-group spaces,
 * dot runs and double hyphens → plain forms; runs of spaces collapsed. Shared by every language.
 */
export function cleanCharacters(text: string): string {
  return text
    .replace(LINE_BREAKS, '\n')
    .replace(CONTROL, '')
    .replace(CHARS, (c) => CHAR_MAP[c] ?? String.fromCharCode(c.charCodeAt(0) - 0xfee0))
    .replace(DIGIT_GROUP_SPACE, '')
    .replace(DOTS, '\u2026')
    .replace(DOUBLE_HYPHEN, '\u2014')
    .replace(SPACES, ' ')
    .replace(NEWLINES, '\n')
    .trim();
}

/**
 * The text as written, for `normalize: false`: line breaks unified, control characters dropped,
 * runs of white space collapsed, the ends trimmed; nothing else changes, not even punctuation.
 */
export function keepAsWritten(text: string): string {
  return text
    .replace(LINE_BREAKS, '\n')
    .replace(CONTROL, '')
    .replace(SPACES, ' ')
    .replace(NEWLINES, '\n')
    .trim();
}

/* ------------------------------------------------------------------------------------------------
 * URLs and e-mail addresses spelled out, when a request asks (`url_normalization`,
 * `email_normalization`): Kokoro-FastAPI's `handle_url` and `handle_email`
 * (remsky/Kokoro-FastAPI api/src/services/text_processing/normalizer.py). Otherwise they are
 * protected below and the English G2P reads them.
 * ---------------------------------------------------------------------------------------------- */

/**
 * Kokoro-FastAPI's VALID_TLDS: a bare domain is a URL only with one of these, in lower case here
 * (theirs matches any case, so "bed.It was" would be a domain), as schemes and `www.` are.
 */
const TLDS =
  'com|org|net|edu|gov|mil|int|biz|info|name|pro|coop|museum|travel|jobs|mobi|tel|asia|cat|xxx|aero|arpa|bg|br|ca|cn|de|es|eu|fr|in|it|jp|mx|nl|ru|uk|us|io|co';
const URL_END = String.raw`[^\s<>"“”]*[^\s<>"“”.,;:!?'()]`;
/**
 * 1: a URL with a scheme or `www.` (as PROTECTED has it); 2: an e-mail address; 3: a bare domain,
 * IPv4 address or `localhost`, with optional port and path. Alternatives in one regex so that the
 * leftmost wins: an address inside a URL is part of the URL. Each starts only where a token does.
 */
const ADDRESS = new RegExp(
  [
    String.raw`(\b(?:https?|ftp)://${URL_END}|\bwww\.${URL_END})`,
    String.raw`((?<![\w.+-])[\w.+-]+@[A-Za-z\d-]+(?:\.[A-Za-z\d-]+)+)`,
    String.raw`((?<![\w.@+-])(?:(?:[A-Za-z\d-]+\.)+(?:${TLDS})|\d{1,3}(?:\.\d{1,3}){3}|localhost)(?::\d+)?(?:[/?]${URL_END})?(?![\w@-]|\.\w))`,
  ].join('|'),
  'g',
);

/** Symbols inside a URL (and an address's local part) → words, as handle_url has them. */
// prettier-ignore
const URL_SYMBOLS: Readonly<Record<string, string>> = {
  '-': ' dash ', _: ' underscore ', '?': ' question mark ', '=': ' equals ', '&': ' ampersand ',
  '%': ' percent ', ':': ' colon ', '/': ' slash ', '.': ' dot ', '+': ' plus ',
};
const PATH_SYMBOLS = /[-_?=&%:/.]/g;
const LOCAL_SYMBOLS = /[-_.+]/g;
const WHITE = /\s+/g;

/**
 * `https://www.example.com:8080/a-b?c=1` → "https www example dot com colon 8080 slash a dash b
 * question mark c equals 1". Unlike handle_url, dots in the path are read too ("index dot html":
 * Kokoro-FastAPI's later acronym rule turns them into hyphens) and `?` is "question mark".
 */
function readUrl(url: string): string {
  let s = url
    .replace(/^(https?|ftp):\/\//, '$1 ')
    .replace(/^www\./, 'www ')
    .replace(/:(\d+)(?=\/|$)/g, ' colon $1');
  const slash = s.indexOf('/');
  const domain = slash < 0 ? s : s.slice(0, slash);
  const path = slash < 0 ? '' : s.slice(slash + 1);
  s = domain.replaceAll('.', ' dot ') + (path === '' ? '' : ` slash ${path}`);
  return s
    .replace(PATH_SYMBOLS, (c) => URL_SYMBOLS[c])
    .replace(WHITE, ' ')
    .trim();
}

/**
 * `jane.doe+tag@example.co.uk` → "jane dot doe plus tag at example dot co dot uk". handle_email
 * reads only the domain's dots; the local part's symbols are read here too.
 */
function readEmail(address: string): string {
  const at = address.lastIndexOf('@');
  const local = address.slice(0, at).replace(LOCAL_SYMBOLS, (c) => URL_SYMBOLS[c]);
  const domain = address.slice(at + 1).replaceAll('.', ' dot ');
  return `${local} at ${domain}`.replace(WHITE, ' ').trim();
}

function readAddresses(text: string, urls: boolean, emails: boolean): string {
  return text.replace(ADDRESS, (m, withScheme?: string, email?: string, bare?: string) => {
    if (withScheme !== undefined) return urls ? readUrl(m) : m;
    if (email !== undefined) return emails ? readEmail(m) : m;
    if (bare !== undefined) return urls ? readUrl(m) : m;
    return m;
  });
}

/* ------------------------------------------------------------------------------------------------
 * Spans left alone: URLs, e-mail addresses, versions and other dotted numbers (espeak reads
 * "v2.0" and "1.2.3" sensibly on its own; reading them as decimals would not).
 * ---------------------------------------------------------------------------------------------- */

const PROTECTED = new RegExp(
  [
    String.raw`\b(?:https?|ftp)://[^\s<>"“”]*[^\s<>"“”.,;:!?'()]`,
    String.raw`\bwww\.[^\s<>"“”]*[^\s<>"“”.,;:!?'()]`,
    String.raw`(?<![\w.+-])[\w.+-]+@[A-Za-z\d-]+(?:\.[A-Za-z\d-]+)+`,
    String.raw`(?<![\w.])[vV]\d+(?:\.\d+)+(?!\w)`,
    // Dotted phone numbers (555.123.4567) are not versions; the phone rule reads them.
    String.raw`(?<![\w.])(?!\d{3}\.\d{3}\.\d{4}(?![\w.]))\d+(?:\.\d+){2,}(?!\w)`,
  ].join('|'),
  'g',
);

/* ------------------------------------------------------------------------------------------------
 * Abbreviations and symbols
 * ---------------------------------------------------------------------------------------------- */

// prettier-ignore
const TITLES: Readonly<Record<string, string>> = {
  Mr: 'Mister', Mrs: 'Missus', Ms: 'Miz', Dr: 'Doctor', St: 'Saint', Prof: 'Professor', Gen: 'General',
  Mt: 'Mount', Ft: 'Fort', Sgt: 'Sergeant', Capt: 'Captain', Lt: 'Lieutenant', Col: 'Colonel', Maj: 'Major',
  Adm: 'Admiral', Cmdr: 'Commander', Rev: 'Reverend', Fr: 'Father', Gov: 'Governor', Sen: 'Senator',
  Rep: 'Representative', Pres: 'President', Hon: 'Honorable',
};
// A title is expanded only before a capitalized word; British style drops the period on the first five.
// "Main St. He left" ends a sentence: "St" before a pronoun or article is a street, not a saint.
const TITLE = new RegExp(
  String.raw`\b(?:(Mrs|Mr|Ms|Dr)\.?|(St)\.?(?! +(?:The|A|An|I|He|She|It|We|You|They|This|That|There|Then|But|And|So|If|In|On|At|My|His|Her|Our|Their)\b)|(Prof|Gen|Mt|Ft|Sgt|Capt|Lt|Col|Maj|Adm|Cmdr|Rev|Fr|Gov|Sen|Rep|Pres|Hon)\.)(?= +[A-Z])`,
  'g',
);

/** "Mr." and company are never anything else, and "the Dr. said" means a doctor: expand before any word. */
const TITLE_BEFORE_LOWER = /\b(Mrs|Mr|Ms|Dr)\.(?= +\p{Ll})/gu;
// prettier-ignore
const LOWER_TITLES: Readonly<Record<string, string>> = {
  Mr: 'Mister', Mrs: 'Missus', Ms: 'Miz', Dr: 'doctor',
};

/** Abbreviations that can end a sentence: their period is kept unless the sentence clearly goes on. */
// prettier-ignore
const TRAILING: Readonly<Record<string, string>> = {
  etc: 'et cetera', Etc: 'Et cetera', Jr: 'Junior', Sr: 'Senior', Inc: 'Incorporated', Ltd: 'Limited',
  Corp: 'Corporation', Bros: 'Brothers', Ave: 'Avenue', Rd: 'Road', Blvd: 'Boulevard', St: 'Street',
};
// "St" left over after the title rule (not before a capitalized word) follows a street name.
const TRAILING_ABBR = /\b(?:(etc|Etc|Jr|Sr|Inc|Ltd|Corp|Bros|Ave|Rd|Blvd)\.|(?<=[\p{L}\p{N}] )(St)\b\.?)/gu;

/** Abbreviations inside a sentence: their period is dropped unless the text ends there. */
// prettier-ignore
const MIDDLE: Readonly<Record<string, string>> = {
  'e.g': 'for example', 'i.e': 'that is', vs: 'versus', approx: 'approximately', cf: 'compare',
};
const MIDDLE_ABBR = /(?<![\p{L}\p{N}.])(e\.g|i\.e|vs|approx|cf)(\.)?(?![\p{L}\p{N}])/giu;

/** Labels before a number: "No. 5" → "number 5". */
// prettier-ignore
const LABELS: Readonly<Record<string, string>> = {
  no: 'number', nos: 'numbers', fig: 'figure', figs: 'figures', vol: 'volume', ch: 'chapter', eq: 'equation',
  pp: 'pages',
};
const LABEL = /\b(No|Nos|Fig|Figs|Vol|Ch|Eq|pp)\. ?(?=#?\d)/giu;

const SYMBOLS: readonly (readonly [RegExp, string])[] = [
  [/(?<!\w)w\/o(?!\w)/g, 'without'],
  [/(?<!\w)w\/(?= )/g, 'with'],
  [/#(?=\d)/g, 'number '],
  [/~ ?(?=[$£€¥₹]?\d)/g, 'about '],
  [/ *& */g, ' and '],
  [/ *@ */g, ' at '],
  [/ *± */g, ' plus or minus '],
];

/**
 * `replace_remaining_symbols`: what is left of Kokoro-FastAPI's SYMBOL_REPLACEMENTS after the rules
 * above (they read `&`, `@`, `#5`, `~5`, `50%`, `2 + 2`, `x = 5` whatever the switch), applied to
 * the text between protected spans. `$` before a digit is misaki's to read. `<` and `>` between
 * operands are ours (theirs has none).
 */
// prettier-ignore
const REMAINING: Readonly<Record<string, string>> = {
  '~': ' ', '@': ' at ', '#': ' number ', $: ' dollar ', '%': ' percent ', '^': ' ', '&': ' and ',
  '*': ' ', _: ' ', '|': ' ', '\\': ' ', '/': ' slash ', '=': ' equals ', '+': ' plus ',
};
const REMAINING_SYMBOL = /[~@#%^&*_|\\/=+]|\$(?! ?\d)/g;
/** A symbol dropped before a mark ("*bold*," → "bold ,") leaves a space there. */
const SPACE_BEFORE_MARK = / +(?=[,.;:!?](?:\s|$))/g;
const COMPARISON = /(?<=[\p{L}\p{N}] ?)([<>])(=?)(?= ?[\p{L}\p{N}])/gu;

/** `optional_pluralization_normalization`: `file(s)` → `files` (Kokoro-FastAPI: any `(s)`). */
const OPTIONAL_PLURAL = /(?<=\p{L})\(([sS])\)/gu;

/** Fractions as glyphs count as digits: only spans with one go through the number rules. */
const HAS_DIGIT = /[\d\u00BC-\u00BE\u2150-\u215E]/;
const EN_DASH = / ?\u2013 ?/g;
const MULTI_SPACE = / {2,}/g;

/**
 * What normalizeText leaves to the front end after it, and the request's switches
 * (normalization-options.ts); a switch left out takes its default, DEFAULT_NORMALIZATION.
 */
export interface NormalizeOptions extends Partial<NormalizationOptions> {
  /**
   * misaki reads plain numbers, decimals, 4-digit years, ordinals and $ £ € amounts itself (`Lexicon.get_number`): leave them to it, since its reading is what Kokoro was trained
   * on. Dates, times, phone numbers, units, ranges, fractions and magnitudes stay ours.
   */
  readonly misaki?: boolean;
}

interface SpanSwitches extends NumberSwitches {
  readonly plurals: boolean;
  readonly symbols: boolean;
}

function normalizeSpan(s: string, british: boolean, misaki: boolean, switches: SpanSwitches): string {
  if (switches.plurals) s = s.replace(OPTIONAL_PLURAL, '$1');
  s = s.replace(
    TITLE,
    (_m, short?: string, saint?: string, long?: string) => TITLES[short ?? saint ?? long ?? ''],
  );
  s = s.replace(TITLE_BEFORE_LOWER, (_m, title: string) => LOWER_TITLES[title]);
  s = s.replace(TRAILING_ABBR, (m, abbr?: string, street?: string, offset?: number, str?: string) => {
    const words = TRAILING[abbr ?? street ?? ''];
    const hadPeriod = m.endsWith('.');
    return hadPeriod && !continuesSentence(str ?? '', (offset ?? 0) + m.length) ? `${words}.` : words;
  });
  s = s.replace(MIDDLE_ABBR, (m, abbr: string, dot?: string, offset?: number, str?: string) => {
    const key = abbr.toLowerCase();
    if (dot === undefined && key !== 'vs') return m;
    const words = MIDDLE[key];
    const capitalized = abbr[0] !== key[0] ? words[0].toUpperCase() + words.slice(1) : words;
    const keep = dot !== undefined && atTextEnd(str ?? '', (offset ?? 0) + m.length);
    return keep ? `${capitalized}.` : capitalized;
  });
  s = s.replace(LABEL, (_m, label: string) => `${LABELS[label.toLowerCase()]} `);
  for (const [re, words] of SYMBOLS) s = s.replace(re, words);
  if (HAS_DIGIT.test(s)) s = normalizeNumbers(s, british, misaki, switches);
  if (switches.symbols)
    s = s
      .replace(
        COMPARISON,
        (_m, sign: string, eq: string) =>
          ` ${sign === '<' ? 'less' : 'greater'} than${eq === '' ? '' : ' or equal to'} `,
      )
      .replace(REMAINING_SYMBOL, (c) => REMAINING[c])
      .replace(SPACE_BEFORE_MARK, '');
  return s;
}

/**
 * Rewrites written English into speakable words for espeak-ng: typographic and CJK punctuation,
 * numbers, money, percentages, times, dates, units, common abbreviations and symbols. Sentence
 * punctuation is kept; anything not recognised passes through unchanged. URLs, e-mail addresses,
 * versions (`v2.0`, `1.2.3`) and other dotted numbers are left for espeak, unless `options` asks
 * for URLs or addresses to be spelled out. `options` also switches readers off or on (see
 * normalization-options.ts); with `normalize: false` the text is returned as written (keepAsWritten).
 *
 * Years: a bare 4-digit number from 1100 to 2099 (no thousands separator, not part of a decimal,
 * not after a currency sign, not before `%`, a unit or a magnitude, not glued to letters) is read
 * as a year: 1999 → "nineteen ninety-nine", 2005 → "two thousand five", 2024 → "twenty twenty-four".
 * So "1500 people" reads "fifteen hundred people", which is also fine English.
 *
 * @param text - one sentence or a few; any length.
 * @param lang - `a` American or `b` British English (see the module notes for what differs).
 */
export function normalizeText(text: string, lang: EnglishLang, options: NormalizeOptions = {}): string {
  const on = (name: keyof NormalizationOptions): boolean => options[name] ?? DEFAULT_NORMALIZATION[name];
  if (!on('normalize')) return keepAsWritten(text);
  const misaki = options.misaki ?? false;
  const british = lang === 'b';
  const switches: SpanSwitches = {
    units: on('unitNormalization'),
    phone: on('phoneNormalization'),
    plurals: on('optionalPluralizationNormalization'),
    symbols: on('replaceRemainingSymbols'),
  };
  let clean = cleanCharacters(text);
  if (clean === '') return clean;
  const urls = on('urlNormalization');
  const emails = on('emailNormalization');
  if (urls || emails) clean = readAddresses(clean, urls, emails);
  let out = '';
  let last = 0;
  for (const m of clean.matchAll(PROTECTED)) {
    out += normalizeSpan(clean.slice(last, m.index), british, misaki, switches) + m[0];
    last = m.index + m[0].length;
  }
  out +=
    last === 0
      ? normalizeSpan(clean, british, misaki, switches)
      : normalizeSpan(clean.slice(last), british, misaki, switches);
  return out
    .replace(EN_DASH, (m) => (m.length > 1 ? ' \u2014 ' : '\u2014'))
    .replace(MULTI_SPACE, ' ')
    .trim();
}
