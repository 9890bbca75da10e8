/**
 * English numbers in running text, as normalize.ts's last step: dates, phone numbers, arithmetic,
 * ranges, times, money, percentages, degrees, units, fractions, ordinals, decades and years, then
 * plain numerals, each rule a regex applied in a fixed order. With `misaki`, what misaki reads
 * itself (plain numbers, years, ordinals, $ £ € amounts) is left as written. Pure and synchronous;
 * every regex is compiled once at module load.
 */
import {
  digitsToWords,
  integerToWords,
  toOrdinalWords,
  yearToWords,
  type NumberWordsOptions,
} from './numbers.ts';
import {
  continuesSentence,
  CURRENCIES,
  fractionWords,
  isOne,
  MAGNITUDE_WORDS,
  MONTH_BY_NAME,
  MONTHS,
  pluralWords,
  readClock,
  readDate,
  readNumeral,
  UNITS,
  validDay,
  VULGAR,
} from './normalize-words.ts';

/* ------------------------------------------------------------------------------------------------
 * Numbers: regex pieces
 * ---------------------------------------------------------------------------------------------- */

/** An integer, with correct `,` thousands grouping or none. */
const INT = String.raw`(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)`;
/** A numeral with optional decimal part. */
const DEC = String.raw`${INT}(?:\.\d+)?`;
/**
 * A numeral starts here only when not glued to a word ("v2", "mp3" stay for espeak) or inside
 * another numeral. Checking this first also keeps every number regex linear on long digit runs.
 */
const B = String.raw`(?<![\p{L}\p{N}_]|\d\.)`;
/** A numeral with an optional minus sign; the sign must not follow a word ("COVID-19"). */
const SIGNED = String.raw`(?:(?<![\p{L}\p{N}_)\]])-)?${B}${DEC}`;
const CURRENCY_SYMBOL = '[$£€¥₹]';
const MAGNITUDE = String.raw`(?: (hundred|thousand|million|billion|trillion)(?!\p{L})|(k|K|mn|m|M|bn|b|B|tn|T)(?![\p{L}\p{N}]))`;
/** am/pm in its written forms; group 1 (+ group 2, the final period) or group 3 holds the letter. */
const AMPM = String.raw` ?(?:([AaPp])\. ?[Mm](\.)?|([AaPp])[Mm])(?![\p{L}\p{N}])`;
const UNIT_ALTERNATION = Object.keys(UNITS)
  .sort((x, y) => y.length - x.length)
  .map((u) => u.replace(/[/.]/g, '\\$&'))
  .join('|');
const MONTH_NAME = String.raw`(January|February|March|April|May|June|July|August|September|October|November|December|(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?)`;

/* ------------------------------------------------------------------------------------------------
 * Numbers: rules, applied in this order (earlier rules consume digits later ones would misread)
 * ---------------------------------------------------------------------------------------------- */

const ISO_DATE = /(?<![\p{L}\p{N}_.-])(\d{4})-(\d{2})-(\d{2})(?![\p{N}_]|-\d)/gu;
const SLASH_DATE = /(?<![\p{L}\p{N}_./])(\d{1,2})\/(\d{1,2})\/(\d{4})(?![\p{N}_]|\/\d)/gu;
// The last form, 555-1234, would otherwise read as a range; a range of that shape nearly always has
// round ends (100-1000, 250-1500), so those are left to the range rule.
const PHONE = new RegExp(
  String.raw`(?<![\p{L}\p{N}_+.-])(?:(\+)\d{1,3}(?:[ .-]\(?\d{1,5}\)?){1,5}|(?:\(\d{3}\) ?|\d{3} )\d{3}[-. ]\d{4}|\d{1,4}(?:-\d{2,5}){2,}|\d{3}\.\d{3}\.\d{4}|[2-9]\d[1-9]-\d{3}[1-9])(?![\p{N}_]|[-.]\d)`,
  'gu',
);
/**
 * Thousands grouped with plain spaces ("1 000 000", "10 000"). Only merged when a later group
 * starts with 0: "100 200 300" is more likely a list than a number.
 */
const SPACE_GROUPED = /(?<![\p{L}\p{N}_.,])\d{1,3}(?: \d{3})+(?![\p{N}]|[.,]\d| \d)/gu;
const ZERO_GROUP = / 0/;
const SPACE = / /g;
const DIGIT_RUNS = /\d+/g;
const OPERATORS: readonly (readonly [RegExp, string])[] = [
  // "5 - 3 = 2" is arithmetic; other dashes between numbers are ranges.
  [/(?<=\d) +- +(?=\d[\d.,]* *=)/g, ' minus '],
  [/(?<=\d) *\+ *(?=\d)/g, ' plus '],
  [/(?<![\p{L}\p{N}_)\]])\+(?=\d)/gu, 'plus '],
  [/(?<=\d) *× *(?=\d)/g, ' times '],
  // Dimensions and resolutions: "1920x1080", "10 x 20".
  [/(?<=\d) ?x ?(?=\d)/g, ' by '],
  [/(?<=\d) *÷ *(?=\d)/g, ' divided by '],
  [/(?<=[\p{L}\p{N})\]]) *(?<![=<>!])=(?![=>]) *(?=[\p{L}\p{N}([$£€¥₹.-])/gu, ' equals '],
];
const CURRENCY_RANGE = new RegExp(
  String.raw`(${CURRENCY_SYMBOL}) ?(${DEC})(?: ?[-–] ?| to )\1?(${DEC})${MAGNITUDE}?(?![\p{N}])`,
  'gu',
);
const RANGE = new RegExp(
  String.raw`(?<![\p{L}\p{N}_:]|\d[.-])(\d{1,2}:\d{2}|${DEC})((?:${AMPM})?) ?[-–] ?(?=${CURRENCY_SYMBOL}?(?:\d{1,2}:\d{2}|${DEC})(?![\p{N}]|[-–]\d))`,
  'gu',
);
const TIME = new RegExp(
  String.raw`${B}(\d{1,2}):([0-5]\d)(?::([0-5]\d))?(?![\p{N}]|:\d|\.\d)(?:${AMPM})?`,
  'gu',
);
/** What is left of n:m after the time rule ("3:1", "16:9") is a ratio. */
const RATIO = new RegExp(String.raw`${B}(\d+):(\d+)(?![\p{N}]|:\d)`, 'gu');
const HOUR_AMPM = new RegExp(String.raw`${B}(\d{1,2})${AMPM}`, 'gu');
const MONTH_DAY = new RegExp(
  String.raw`\b${MONTH_NAME} (\d{1,2})(?:st|nd|rd|th)?(?![\p{L}\p{N}_]|:\d|\.\d)`,
  'gu',
);
const DAY_MONTH = new RegExp(
  String.raw`(?<!\bthe )${B}(\d{1,2})(?:st|nd|rd|th)? ${MONTH_NAME}(?!\p{L})`,
  'gu',
);
const CURRENCY = new RegExp(
  String.raw`(?:(?<![\p{L}\p{N}_)\]])(-))?(US)?(${CURRENCY_SYMBOL}) ?(-)?(${INT})(?:\.(\d+))?${MAGNITUDE}?(?![\p{N}])`,
  'gu',
);
const CENTS = new RegExp(String.raw`${B}(${INT}) ?¢`, 'gu');
const PERCENT = new RegExp(String.raw`(${SIGNED}) ?%`, 'gu');
const DEGREES = new RegExp(String.raw`(${SIGNED}) ?(?:°(?: ?([CF])(?![\p{L}]))?|(℃)|(℉))`, 'gu');
const UNIT = new RegExp(String.raw`(${SIGNED}) ?(${UNIT_ALTERNATION})([²³])?(?![\p{L}\p{N}_])`, 'gu');
/** The magnitudes among UNITS ("10k", "5 bn"): read even when units are not. */
const MAGNITUDE_UNIT = new RegExp(String.raw`(${SIGNED}) ?(k|bn)([²³])?(?![\p{L}\p{N}_])`, 'gu');
const VULGAR_FRACTION = new RegExp(String.raw`(?:${B}(\d+) ?)?([${Object.keys(VULGAR).join('')}])`, 'gu');
const SLASH_FRACTION = /(?<![\p{L}\p{N}_/]|\d\.)(?:(\d+) )?(\d{1,2})\/(\d{1,2})(?![\p{N}_/]|\.\d)/gu;
const ORDINAL = new RegExp(String.raw`${B}(${INT})(st|nd|rd|th)(?![\p{L}\p{N}_])`, 'giu');
const DECADE = /(?<![\p{L}\p{N}_.,])(?:'(\d)0|(1[1-9]|20)?(\d)0)'?s(?![\p{L}\p{N}_])/gu;
const YEAR = /(?<![\p{L}\p{N}_.,'$£€¥₹#-])(1[1-9]\d\d|20\d\d)(?![\p{L}\p{N}_]|[.,]\d)/gu;
const SHORT_YEAR = /(?<![\p{L}\p{N}_])'(\d\d)(?![\p{L}\p{N}_])/gu;
const NUMBER = new RegExp(
  String.raw`((?:(?<![\p{L}\p{N}_)\]])-)?)(?:${B}(${INT})(?:\.(\d+))?|(?<![\p{L}\p{N}_.])\.(\d+))`,
  'gu',
);
const LETTER = /\p{L}/u;
const ZERO_AMOUNT = /^[0,]*$/;

const MISAKI_CURRENCIES = new Set(['$', '£', '€']);

/** The readers a request may switch off (normalization-options.ts); both on by default. */
export interface NumberSwitches {
  /** Units and degrees ("5 km", "25°C"); off, they stay as written. */
  readonly units?: boolean;
  /** Phone numbers; off, their digits go to the rules after it (as in Kokoro-FastAPI). */
  readonly phone?: boolean;
}

/**
 * Every number-like form in `s` (a span between protected ones) → words, rule by rule in the order
 * above; `british` for British English, `misaki` to leave misaki's own forms as written, `switches`
 * to leave units or phone numbers unread.
 */
export function normalizeNumbers(
  s: string,
  british: boolean,
  misaki: boolean,
  switches: NumberSwitches = {},
): string {
  const opts: NumberWordsOptions = { and: british };
  const num = (numeral: string): string => readNumeral(numeral, opts);

  s = s.replace(ISO_DATE, (m, y: string, mo: string, d: string) =>
    validDay(Number(mo) - 1, Number(d)) ? readDate(Number(y), Number(mo) - 1, Number(d), british) : m,
  );
  s = s.replace(SLASH_DATE, (m, a: string, b: string, y: string) => {
    // American month/day/year, British day/month/year; fall back to the other order when impossible.
    let [month, day] = british ? [Number(b) - 1, Number(a)] : [Number(a) - 1, Number(b)];
    if (!validDay(month, day))
      [month, day] = british ? [Number(a) - 1, Number(b)] : [Number(b) - 1, Number(a)];
    return validDay(month, day) ? readDate(Number(y), month, day, british) : m;
  });
  s = s.replace(SPACE_GROUPED, (m) => (ZERO_GROUP.test(m) ? m.replace(SPACE, '') : m));
  if (switches.phone !== false)
    s = s.replace(PHONE, (m, plus: string | undefined) => {
      const groups = m.match(DIGIT_RUNS) ?? [];
      let digits = 0;
      for (const g of groups) digits += g.length;
      if (digits < 7) return m;
      return (plus === undefined ? '' : 'plus ') + groups.map(digitsToWords).join(', ');
    });
  for (const [re, words] of OPERATORS) s = s.replace(re, words);
  s = s.replace(CURRENCY_RANGE, (m, sym: string, a: string, b: string, word?: string, letter?: string) => {
    const magnitude = word ?? (letter === undefined ? undefined : MAGNITUDE_WORDS[letter]);
    // Decimal amounts without a magnitude read better with their cents, one by one.
    if (magnitude === undefined && (a.includes('.') || b.includes('.'))) return m;
    const c = CURRENCIES[sym];
    const unit = magnitude === undefined && isOne(b) ? c.one : c.many;
    return `${num(a)} to ${num(b)}${magnitude === undefined ? '' : ` ${magnitude}`} ${unit}`;
  });
  s = s.replace(RANGE, '$1$2 to ');
  s = s.replace(
    TIME,
    (
      m,
      hh: string,
      mm: string,
      ss?: string,
      a1?: string,
      dot?: string,
      a2?: string,
      offset?: number,
      str?: string,
    ) => {
      const hour = Number(hh);
      const letter = a1 ?? a2;
      // Hours past 24 are minutes of a duration ("25:30" → "twenty-five thirty"); read them alike.
      if (letter !== undefined && (hour < 1 || hour > 12)) return m;
      const ampm = letter === undefined ? undefined : `${letter.toUpperCase()}M`;
      let words = readClock(hour, mm, ampm);
      if (ss !== undefined) words += ` and ${integerToWords(ss)} ${ss === '01' ? 'second' : 'seconds'}`;
      const keep = dot !== undefined && !continuesSentence(str ?? '', (offset ?? 0) + m.length);
      return keep ? `${words}.` : words;
    },
  );
  s = s.replace(RATIO, '$1 to $2');
  s = s.replace(
    HOUR_AMPM,
    (m, hh: string, a1?: string, dot?: string, a2?: string, offset?: number, str?: string) => {
      const hour = Number(hh);
      if (hour < 1 || hour > 12) return m;
      const words = `${integerToWords(hh)} ${(a1 ?? a2 ?? '').toUpperCase()}M`;
      const keep = dot !== undefined && !continuesSentence(str ?? '', (offset ?? 0) + m.length);
      return keep ? `${words}.` : words;
    },
  );
  s = s.replace(MONTH_DAY, (m, name: string, d: string) => {
    const month = MONTH_BY_NAME.get(name.endsWith('.') ? name.slice(0, -1) : name) ?? -1;
    if (!validDay(month, Number(d))) return m;
    return `${MONTHS[month]} ${toOrdinalWords(integerToWords(d))}`;
  });
  s = s.replace(DAY_MONTH, (m, d: string, name: string) => {
    const month = MONTH_BY_NAME.get(name.endsWith('.') ? name.slice(0, -1) : name) ?? -1;
    if (!validDay(month, Number(d))) return m;
    return `the ${toOrdinalWords(integerToWords(d))} of ${MONTHS[month]}`;
  });
  s = s.replace(
    CURRENCY,
    (
      _m,
      sign1?: string,
      us?: string,
      sym = '$',
      sign2?: string,
      whole = '0',
      fraction?: string,
      word?: string,
      letter?: string,
    ) => {
      const c = CURRENCIES[sym];
      // misaki reads $, £ and € amounts itself (dollars and cents, pounds and pence).
      if (
        misaki &&
        MISAKI_CURRENCIES.has(sym) &&
        us === undefined &&
        sign1 === undefined &&
        sign2 === undefined &&
        word === undefined &&
        letter === undefined &&
        (fraction === undefined || fraction.length <= 2)
      )
        return _m;
      const minus = sign1 !== undefined || sign2 !== undefined ? 'minus ' : '';
      const many = us === undefined ? c.many : `US ${c.many}`;
      const one = us === undefined ? c.one : `US ${c.one}`;
      const magnitude = word ?? (letter === undefined ? undefined : MAGNITUDE_WORDS[letter]);
      const amount = fraction === undefined ? whole : `${whole}.${fraction}`;
      if (magnitude !== undefined) return `${minus}${num(amount)} ${magnitude} ${many}`;
      if (
        fraction === undefined ||
        fraction.length > 2 ||
        c.minorOne === undefined ||
        c.minorMany === undefined
      ) {
        return `${minus}${num(amount)} ${amount === '1' ? one : many}`;
      }
      const cents = Number(fraction.length === 1 ? `${fraction}0` : fraction);
      const majorIsZero = ZERO_AMOUNT.test(whole);
      const major = `${num(whole)} ${whole === '1' ? one : many}`;
      const minor = `${integerToWords(String(cents))} ${cents === 1 ? c.minorOne : c.minorMany}`;
      if (cents === 0) return `${minus}${major}`;
      return majorIsZero ? `${minus}${minor}` : `${minus}${major} and ${minor}`;
    },
  );
  s = s.replace(CENTS, (_m, n: string) => `${num(n)} ${n === '1' ? 'cent' : 'cents'}`);
  // Ours even before misaki: misaki would carry a $ amount's currency onto a following percentage.
  s = s.replace(PERCENT, (_m, n: string) => `${num(n)} percent`);
  const units = switches.units !== false;
  if (units)
    s = s.replace(DEGREES, (_m, n: string, scale?: string, celsius?: string, fahrenheit?: string) => {
      const degrees = isOne(n) ? 'degree' : 'degrees';
      const name =
        scale === 'C' || celsius !== undefined
          ? ' Celsius'
          : scale === 'F' || fahrenheit !== undefined
            ? ' Fahrenheit'
            : '';
      return `${num(n)} ${degrees}${name}`;
    });
  s = s.replace(units ? UNIT : MAGNITUDE_UNIT, (_m, n: string, unit: string, power?: string) => {
    const [one, many] = UNITS[unit];
    const prefix = power === '²' ? 'square ' : power === '³' ? 'cubic ' : '';
    return `${num(n)} ${prefix}${isOne(n) ? one : many}`;
  });
  s = s.replace(VULGAR_FRACTION, (_m, whole: string | undefined, glyph: string) => {
    const [n, d] = VULGAR[glyph];
    return whole === undefined
      ? fractionWords(n, d, false)
      : `${num(whole)} and ${fractionWords(n, d, true)}`;
  });
  s = s.replace(SLASH_FRACTION, (m, whole: string | undefined, a: string, b: string) => {
    const n = Number(a);
    const d = Number(b);
    if (whole === undefined && n === 24 && d === 7) return 'twenty-four seven';
    // Only proper fractions with small denominators: "9/11" and "50/50" are not fractions.
    if (n < 1 || n >= d || d > 10) return m;
    return whole === undefined
      ? fractionWords(n, d, false)
      : `${num(whole)} and ${fractionWords(n, d, true)}`;
  });
  if (!misaki)
    s = s.replace(ORDINAL, (_m, n: string) => toOrdinalWords(integerToWords(n.replaceAll(',', ''), opts)));
  s = s.replace(DECADE, (_m, shortDecade?: string, century?: string, decade?: string) => {
    if (shortDecade !== undefined) return pluralWords(integerToWords(`${shortDecade}0`));
    const year = Number(`${century ?? ''}${decade ?? ''}0`);
    return pluralWords(century === undefined ? integerToWords(String(year)) : yearToWords(year, opts));
  });
  if (!misaki) s = s.replace(YEAR, (_m, y: string) => yearToWords(Number(y), opts));
  s = s.replace(SHORT_YEAR, (_m, y: string) =>
    y.startsWith('0') ? `oh ${integerToWords(y)}` : integerToWords(y),
  );
  if (misaki) return s; // plain numbers, decimals and signs: misaki's get_number reads them
  s = s.replace(
    NUMBER,
    (m, sign: string, whole?: string, fraction?: string, bare?: string, offset?: number, str?: string) => {
      const numeral =
        whole === undefined ? `.${bare ?? ''}` : fraction === undefined ? whole : `${whole}.${fraction}`;
      const words = readNumeral(sign + numeral, opts);
      // Keep a glued letter apart ("3D" → "three D"), but not a plural s ("5s" → "fives").
      const end = (offset ?? 0) + m.length;
      const next = str?.[end];
      if (next === undefined || !LETTER.test(next)) return words;
      return next === 's' && !LETTER.test(str?.[end + 1] ?? ' ') ? words : `${words} `;
    },
  );
  return s;
}
