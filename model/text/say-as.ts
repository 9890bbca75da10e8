/**
 * SSML `<say-as interpret-as="…" format="…" detail="…">`: the text a language's front end should
 * read instead of the element's content, built from the readers the normalizers already use.
 * Pure and synchronous; never throws for what a client sends.
 *
 * Each language states, in its module (languages/), which family of readers reads it, the kinds
 * it has no reader for (refused) and its words for plus and minus. English reads every kind in
 * words. Spanish, French, Italian, Brazilian Portuguese and Hindi are read by espeak-ng, which
 * reads digits in the voice's language: a number becomes digits it reads well ("1.234,5" →
 * "1234,5", "-5" → "menos 5", "21" ordinal → "21º"). Japanese and Mandarin use their own number
 * readers (kana, Chinese numerals). The spoken text may go through the language's normalizer
 * again: it leaves all of it as it is.
 *
 * Content is capped at {@link MAX_SAY_AS_CHARS} characters: a say-as element holds a number, a
 * date or a word, and the cap keeps every reader cheap whatever a client sends.
 */
import type { LanguageCode } from '../kokoro/constants.ts';
import { digitsToWords, integerToWords, numeralToWords, toOrdinalWords, yearToWords } from './numbers.ts';
import { MONTH_BY_NAME, MONTHS, readClock, readDate, validDay } from './normalize-words.ts';
import { normalizeNumbers } from './normalize-numbers.ts';
import { normalizeIntl, type EspeakNumbers } from './normalize-intl.ts';
import { languageOf } from './languages/index.ts';
import type { SayAsKind as Kind, SayAsReading } from './languages/language.ts';
import { integerToKana, numbersToKana } from './japanese.ts';
import { digitsToZh, integerToZh, numbersToZh } from './mandarin.ts';

/** interpret-as values (W3C, Amazon Polly, Google, Azure spellings) → the kind read. */
// prettier-ignore
const KIND_OF: Readonly<Record<string, Kind>> = {
  characters: 'characters', 'spell-out': 'characters', verbatim: 'characters', cardinal: 'cardinal',
  number: 'cardinal', ordinal: 'ordinal', digits: 'digits', number_digit: 'digits', telephone: 'telephone',
  date: 'date', time: 'time', currency: 'currency', unit: 'unit',
};

/** The interpret-as values {@link sayAs} reads (any case). */
export const SAY_AS_KINDS: readonly string[] = Object.freeze(Object.keys(KIND_OF));

/** Longer content is refused and read as written. */
export const MAX_SAY_AS_CHARS = 256;

const DATE_FORMATS: readonly string[] = ['mdy', 'dmy', 'ymd', 'md', 'dm', 'ym', 'my', 'y', 'd', 'm'];
/**
 * The values `format` may take, by kind; other kinds ignore it. A date's gives its written order
 * (the spoken order is the language's own); a time's, the clock to read it on.
 */
// prettier-ignore
const FORMATS: Partial<Record<Kind, readonly string[]>> = { date: DATE_FORMATS, time: ['hms12', 'hms24', 'hm12', 'hm24'] };

/** say-as's other attributes. `detail` is accepted and has no effect. */
export interface SayAsOptions {
  readonly format?: string;
  readonly detail?: string;
}

export type SayAsResult = { spoken: string } | { unsupported: string };

/** What a reader returns: the spoken text, or undefined when the content is not of its kind. */
type Reading = string | undefined;
/** Symbols the English characters reading names; other symbols are skipped. */
// prettier-ignore
const SYMBOL_NAMES: Readonly<Record<string, string>> = {
  '-': 'dash', _: 'underscore', '.': 'dot', '@': 'at', '#': 'hash', '&': 'and', '+': 'plus', '/': 'slash',
  '*': 'star', '%': 'percent', $: 'dollar',
};

const NON_ASCII_DIGIT = /[०-९０-９]/g;
const LETTER = /^\p{L}$/u;
const MARK = /^\p{M}$/u;
const EN_NUMERAL = /^[-−]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)$/;
const COMMA_DECIMAL = /^([-−])?(\d{1,3}(?:[. \u00A0\u202F]\d{3})+|\d+)(?:,(\d+))?$/;
/** A point before other than three digits is a decimal point in any language ("1.5", "0.25"). */
const POINT_DECIMAL = /^([-−])?(\d+)\.(\d{1,2}|\d{4,})$/;
const HINDI_NUMERAL = /^([-−])?(\d{1,3}(?:,\d{3})+|\d{1,2}(?:,\d{2})*,\d{3}|\d+)(?:\.(\d+))?$/;
const EN_ORDINAL = /^(\d{1,3}(?:,\d{3})+|\d+)(?:st|nd|rd|th)?$/i;
const INTL_ORDINAL = /^(\d+)\.?(º|ª|°|o|a|er|re|ère|e|ème|ᵉ)?$/;
const DIGITS = /^\d+(?:[ -]\d+)*$/;
const PHONE = /^\+?[\d\s()./-]+$/;
const DIGIT_RUN = /\d+/g;
const DATE_SEPARATORS = /[\s/.,年月日-]+/;
const DAY_SUFFIX = /(?<=\d)(?:st|nd|rd|th)$/i;
const TIME = /^(\d{1,2})(?::([0-5]\d)(?::([0-5]\d))?)?\s*(?:([ap])\.?\s?m\.?)?$/i;
const AMOUNT = String.raw`\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?`;
const EN_CODES: Readonly<Record<string, string>> = { USD: '$', GBP: '£', EUR: '€', JPY: '¥', INR: '₹' };
const EN_MONEY = new RegExp(
  String.raw`^([-−])?(?:(US)?([$£€¥₹]) ?(${AMOUNT})|(${AMOUNT}) ?([$£€¥₹]|USD|GBP|EUR|JPY|INR)|(USD|GBP|EUR|JPY|INR) ?(${AMOUNT}))$`,
);
const INTL_SIGN = String.raw`(?:US\$|R\$|Rs\.|[$€£¥₹]|EUR|USD|GBP|JPY|BRL|INR)`;
const INTL_MONEY = new RegExp(
  String.raw`^(?:${INTL_SIGN} ?\d[\d.,\u00A0\u202F ]*|\d[\d.,\u00A0\u202F ]* ?${INTL_SIGN})$`,
);
/** What normalizeIntl leaves of an amount it did not read: a sign, or digits not before a word. */
const INTL_MONEY_LEFT = new RegExp(`${INTL_SIGN}|\\d(?!\\d* \\p{L})`, 'u');
/** Mandarin's money reader (numbersToZh) knows these signs; ISO codes map onto them. */
// prettier-ignore
const ZH_CODES: Readonly<Record<string, string>> = { USD: '$', EUR: '€', GBP: '£', INR: '₹', CNY: '¥', RMB: '¥' };
const ZH_SIGN = String.raw`(US\$|[¥￥$€£₹]|[A-Z]{3})`;
const ZH_MONEY = new RegExp(String.raw`^(?:${ZH_SIGN} ?(${AMOUNT})|(${AMOUNT}) ?${ZH_SIGN})$`);
const UNIT = /^-?[\d.,]*\d ?[^\d\s]\D*$/;
const ANY_DIGIT = /\d/;
const SIGN = /^[-−]/;
const LEADING_POINT = /^\./;

// prettier-ignore
const NOUNS: Readonly<Record<Kind, string>> = {
  characters: 'text with letters or digits', cardinal: 'a number', ordinal: 'an ordinal number',
  digits: 'a string of digits', telephone: 'a telephone number', date: 'a date', time: 'a time',
  currency: 'an amount of money it knows', unit: 'a number with a unit',
};

/** A run of digits read one by one: "one two", "1 2" (espeak-ng reads each), "いち に", "一二". */
function digitRun(digits: string, { family }: SayAsReading): string {
  if (family === 'english') return digitsToWords(digits);
  if (family === 'chinese') return digitsToZh(digits);
  return [...digits].map((d) => (family === 'japanese' ? integerToKana(d) : d)).join(' ');
}

function readCharacters(text: string, reading: SayAsReading): Reading {
  const english = reading.family === 'english';
  const out: string[] = [];
  for (const c of text) {
    if (c >= '0' && c <= '9') out.push(digitRun(c, reading));
    else if (LETTER.test(c)) {
      const upper = c.toUpperCase();
      // misaki tags a lone "A" as the article (ɐ); "eh" is the letter's name in its lexicons.
      out.push(english && upper === 'A' ? 'eh' : upper);
    } else if (MARK.test(c) && out.length > 0) out[out.length - 1] += c;
    else if (english && Object.hasOwn(SYMBOL_NAMES, c)) out.push(SYMBOL_NAMES[c]);
  }
  return out.length === 0 ? undefined : out.join(' ');
}

/** A numeral in a language espeak-ng reads: group marks dropped, the language's decimal mark kept. */
function espeakNumeral(text: string, numbers: EspeakNumbers, minus: string): string | undefined {
  const m = POINT_DECIMAL.exec(text) ?? (numbers.indian ? HINDI_NUMERAL : COMMA_DECIMAL).exec(text);
  if (m === null) return undefined;
  const [, sign, whole, fraction] = m;
  const number = whole.replace(/\D/g, '') + (fraction === undefined ? '' : numbers.decimal + fraction);
  return sign === undefined ? number : `${minus} ${number}`;
}

function readCardinal(text: string, reading: SayAsReading): Reading {
  if (reading.family === 'espeak') return espeakNumeral(text, reading.numbers, reading.minus);
  if (!EN_NUMERAL.test(text)) return undefined;
  if (reading.family === 'english') return numeralToWords(text, { and: reading.british });
  const negative = SIGN.test(text);
  const body = text.replace(SIGN, '').replaceAll(',', '').replace(LEADING_POINT, '0.');
  if (reading.family === 'chinese') return numbersToZh(negative ? `-${body}` : body);
  const words = numbersToKana(body).trim();
  return negative ? `${reading.minus} ${words}` : words;
}

function readOrdinal(text: string, reading: SayAsReading): Reading {
  if (reading.family === 'english') {
    const digits = EN_ORDINAL.exec(text)?.[1].replaceAll(',', '');
    return digits && toOrdinalWords(integerToWords(digits, { and: reading.british }));
  }
  const m = INTL_ORDINAL.exec(text);
  if (m === null) return undefined;
  const n = m[1].replace(/^0+(?=\d)/, '');
  if (reading.family === 'japanese') return `だい${integerToKana(n)}`;
  if (reading.family === 'chinese') return `第${integerToZh(n)}`;
  // espeak-ng reads "1º"/"1ª" in Spanish, Italian and Portuguese, "1er"/"2ème" in French.
  return reading.ordinal(n, m[2] === 'ª' || m[2] === 'a');
}

function readDigits(text: string, reading: SayAsReading): Reading {
  return DIGITS.test(text) ? digitRun(text.replace(/\D/g, ''), reading) : undefined;
}

function readTelephone(text: string, reading: SayAsReading): Reading {
  if (!PHONE.test(text) || !ANY_DIGIT.test(text)) return undefined;
  const groups = text.match(DIGIT_RUN) ?? [];
  const { family } = reading;
  // Mandarin reads 1 as 幺 in phone numbers.
  const read = groups.map((g) =>
    family === 'chinese' ? digitsToZh(g).replaceAll('一', '幺') : digitRun(g, reading),
  );
  const body = read.join(family === 'japanese' ? '、' : ', ');
  return text.startsWith('+') ? `${reading.plus} ${body}` : body;
}

/** Parts in the order of `format`; undefined when one does not fit its slot or the day cannot be. */
function assignDate(parts: readonly string[], months: readonly (number | undefined)[], format: string) {
  if (format.length !== parts.length) return undefined;
  const date: { year?: string; month?: number; day?: number } = {};
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    const numeric = months[i] === undefined;
    const n = Number(p);
    if (format[i] === 'y' && numeric && (p.length === 2 || p.length === 4)) date.year = p;
    else if (format[i] === 'm' && (!numeric || (n >= 1 && n <= 12))) date.month = months[i] ?? n - 1;
    else if (format[i] === 'd' && numeric && n >= 1 && n <= 31) date.day = n;
    else return undefined;
  }
  const { month, day } = date;
  return month !== undefined && day !== undefined && !validDay(month, day) ? undefined : date;
}

/** Without a format: a month name is the month, 3+ digits the year, the rest by the language's order. */
function guessFormat(parts: readonly string[], months: readonly (number | undefined)[], british: boolean) {
  const slots: string[] = parts.map((p, i) => (months[i] !== undefined ? 'm' : p.length >= 3 ? 'y' : '?'));
  const base = slots[0] === 'y' ? 'ymd' : british ? 'dmy' : 'mdy';
  const free = [...base].filter((c) => !slots.includes(c));
  let k = 0;
  const format = slots.map((s) => (s === '?' ? (free[k++] ?? '?') : s)).join('');
  return DATE_FORMATS.includes(format) ? format : undefined;
}

function readDateKind(text: string, reading: SayAsReading, format: string | undefined): Reading {
  const parts = text
    .split(DATE_SEPARATORS)
    .filter((p) => p !== '')
    .map((p) => p.replace(DAY_SUFFIX, ''));
  const months = parts.map((p) => MONTH_BY_NAME.get(p.charAt(0).toUpperCase() + p.slice(1).toLowerCase()));
  if (parts.some((p, i) => months[i] === undefined && !/^\d{1,4}$/.test(p))) return undefined;
  const british = reading.family === 'english' && reading.british;
  const order = format ?? guessFormat(parts, months, british);
  if (order === undefined) return undefined;
  // A guessed order falls back to the other one when its day cannot be ("25/12" in American).
  const swapped = order.replace(/[md]/g, (c) => (c === 'm' ? 'd' : 'm'));
  const date = assignDate(parts, months, order) ?? (format ? undefined : assignDate(parts, months, swapped));
  if (date === undefined) return undefined;
  const { year, month, day } = date;
  if (reading.family === 'chinese') {
    const y = year === undefined ? '' : `${digitsToZh(year)}年`;
    const m = month === undefined ? '' : `${integerToZh(String(month + 1))}月`;
    return `${y}${m}${day === undefined ? '' : `${integerToZh(String(day))}日`}`;
  }
  // A two-digit year as it is said: "24" → "twenty-four", "05" → "oh five".
  const short = (y: string) => `${y.startsWith('0') ? 'oh ' : ''}${integerToWords(y)}`;
  const yearWords = year && (year.length === 4 ? yearToWords(Number(year), { and: british }) : short(year));
  if (month !== undefined && day !== undefined)
    return readDate(undefined, month, day, british) + (yearWords === undefined ? '' : `, ${yearWords}`);
  if (month !== undefined) return yearWords === undefined ? MONTHS[month] : `${MONTHS[month]} ${yearWords}`;
  if (day !== undefined) return `the ${toOrdinalWords(integerToWords(String(day)))}`;
  return yearWords;
}

/** Minutes or seconds in Mandarin: "05" → 零五分; none when "00". */
const zhClockPart = (value: string, unit: string): string =>
  value === '00' ? '' : `${value.startsWith('0') ? '零' : ''}${integerToZh(value)}${unit}`;

function readTime(text: string, reading: SayAsReading, format: string | undefined): Reading {
  const clock = format?.slice(-2);
  const m = TIME.exec(text);
  if (m === null) return undefined;
  const [, hh, mm, ss, letter] = m;
  let hour = Number(hh);
  let ampm = letter === undefined ? undefined : `${letter.toUpperCase()}M`;
  if (mm === undefined && ampm === undefined) return undefined;
  if (ampm === undefined ? hour > 23 : hour < 1 || hour > 12) return undefined;
  if (clock === '24' && ampm !== undefined) {
    hour = (hour % 12) + (ampm === 'PM' ? 12 : 0);
    ampm = undefined;
  } else if (clock === '12' && ampm === undefined) {
    ampm = hour >= 12 ? 'PM' : 'AM';
    hour = hour % 12 === 0 ? 12 : hour % 12;
  }
  if (reading.family === 'chinese') {
    const half = ampm === undefined ? '' : ampm === 'AM' ? '上午' : '下午';
    const h = hour === 2 ? '两' : integerToZh(String(hour));
    return `${half}${h}点${zhClockPart(mm ?? '00', '分')}${zhClockPart(ss ?? '00', '秒')}`;
  }
  const words = readClock(hour, mm ?? '00', ampm);
  if (ss === undefined || ss === '00') return words;
  return `${words} and ${integerToWords(ss)} ${ss === '01' ? 'second' : 'seconds'}`;
}

function readCurrency(text: string, reading: SayAsReading): Reading {
  if (reading.family === 'english') {
    const m = EN_MONEY.exec(text);
    if (m === null) return undefined;
    const [, sign, us, sym1, amount1, amount2, after, code, amount3] = m;
    const written = sym1 ?? after ?? code;
    const sym = Object.hasOwn(EN_CODES, written) ? EN_CODES[written] : written;
    const amount = amount1 ?? amount2 ?? amount3;
    // The normalizer's money rule, misaki's shortcut off, reads the amount in words.
    const money = `${sign === undefined ? '' : '-'}${us ?? ''}${sym}${amount}`;
    const words = normalizeNumbers(money, reading.british, false);
    return ANY_DIGIT.test(words) ? undefined : words;
  }
  if (reading.family === 'espeak') {
    if (!INTL_MONEY.test(text)) return undefined;
    const words = normalizeIntl(text, reading.numbers);
    return INTL_MONEY_LEFT.test(words) ? undefined : words;
  }
  const m = ZH_MONEY.exec(text);
  if (m === null) return undefined;
  const sign = m[1] ?? m[4];
  const sym = sign.length === 3 && sign !== 'US$' ? ZH_CODES[sign] : sign;
  return sym === undefined ? undefined : numbersToZh(`${sym}${m[2] ?? m[3]}`);
}

function readUnit(text: string, reading: SayAsReading): Reading {
  const plain = text.replace('−', '-');
  if (!UNIT.test(plain)) return undefined;
  // The normalizer's unit, percent and degree rules; a unit they do not know is read as written.
  const words = normalizeNumbers(plain, reading.family === 'english' && reading.british, false);
  return ANY_DIGIT.test(words) ? undefined : words;
}

type Reader = (text: string, reading: SayAsReading, format: string | undefined) => Reading;
// prettier-ignore
const READERS: Readonly<Record<Kind, Reader>> = {
  characters: readCharacters, cardinal: readCardinal, ordinal: readOrdinal, digits: readDigits,
  telephone: readTelephone, date: readDateKind, time: readTime, currency: readCurrency, unit: readUnit,
};

/**
 * The text to read for `<say-as interpret-as="…">content</say-as>` in `lang`, or, when the kind is
 * unknown, not read in that language, or the content is not of that kind, a warning sentence (the
 * caller then reads the content as written). Never throws for client input.
 *
 * @example sayAs('date', '12/25/2024', 'a') → { spoken: 'December twenty-fifth, twenty twenty-four' }
 * @example sayAs('digits', '907', 'e') → { spoken: '9 0 7' } (espeak-ng reads each digit in Spanish)
 * @param options - `format`: a date's written order (`mdy`, `dmy`, `ymd`, `md`, `dm`, `ym`, `my`,
 *   `y`, `d`, `m`; guessed from the language and the content when absent) or a time's clock
 *   (`hms12`, `hms24`: read on a 12-hour clock with AM/PM, or a 24-hour one); ignored for the other
 *   kinds. `detail` is ignored.
 */
export function sayAs(
  interpretAs: string,
  content: string,
  lang: LanguageCode,
  options: SayAsOptions = {},
): SayAsResult {
  const name = interpretAs.trim().toLowerCase();
  const tag = `say-as interpret-as="${interpretAs.trim().slice(0, 32)}"`;
  const refuse = (why: string) => ({ unsupported: `${tag} ${why}; its text is read as written` });
  if (!Object.hasOwn(KIND_OF, name)) return refuse(`is not supported (one of: ${SAY_AS_KINDS.join(', ')})`);
  const kind = KIND_OF[name];
  const language = languageOf(lang);
  const reading = language.sayAs;
  if (reading === undefined || reading.unsupported.includes(kind))
    return refuse(`is not supported in ${language.name}`);
  if (content.length > MAX_SAY_AS_CHARS) return refuse(`has more than ${MAX_SAY_AS_CHARS} characters`);
  const text = content
    .normalize('NFC')
    .trim()
    .replace(NON_ASCII_DIGIT, (d) => String(d.charCodeAt(0) - (d >= '０' ? 0xff10 : 0x966)));
  if (text === '') return refuse('is empty');
  const known = FORMATS[kind];
  const format = known && (options.format?.trim().toLowerCase() || undefined);
  if (format !== undefined && !known?.includes(format))
    return refuse(`format="${format.slice(0, 16)}" is not a ${kind} format (one of: ${known?.join(', ')})`);
  const spoken = READERS[kind](text, reading, format);
  if (spoken !== undefined) return { spoken };
  return refuse(`content is not ${NOUNS[kind]}${format === undefined ? '' : ` (format="${format}")`}`);
}
