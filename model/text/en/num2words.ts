/**
 * English number words exactly as the Python library num2words 0.5.14 writes them, because
 * misaki (`misaki/en.py`, `Lexicon.get_number`, which pins that release) splits its output into
 * words: `num2words(int)`, `to='ordinal'`, `to='year'` and `num2words(float(text))`.
 *
 * A port of savoirfairelinux/num2words at tag v0.5.14 (LGPL-2.1): `num2words/base.py`
 * (`Num2Word_Base`: `splitnum`, `clean`, `to_cardinal`, `float2tuple`, `to_cardinal_float`),
 * `num2words/lang_EU.py` (the "-illion" names) and `num2words/lang_EN.py` (`Num2Word_EN`: `merge`,
 * `to_ordinal`, `to_year`). Title case and currencies are left out.
 */

/** A piece of a number being read: its words and the value they stand for. */
type Pair = readonly [text: string, num: bigint];

/** The words for 0 … 20, num2words' `low_numwords`. */
// prettier-ignore
const LOW = [
  'zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten',
  'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen', 'twenty',
];

/**
 * num2words' `cards`, largest first: 10^303 "centillion" down to 10^6 "million" (lang_EU builds
 * the Latin prefixes, lang_EN spaces them by 10^3), then thousand, hundred, the tens, 20 … 0.
 */
const CARDS: readonly (readonly [bigint, string])[] = (() => {
  const units = ['', 'un', 'duo', 'tre', 'quattuor', 'quin', 'sex', 'sept', 'octo', 'novem'];
  // prettier-ignore
  const tens = [
    'dec', 'vigint', 'trigint', 'quadragint', 'quinquagint', 'sexagint', 'septuagint', 'octogint', 'nonagint',
  ];
  const lows = ['non', 'oct', 'sept', 'sext', 'quint', 'quadr', 'tr', 'b', 'm'];
  const high = ['cent', ...tens.flatMap((t) => units.map((u) => u + t)).reverse(), ...lows];
  const cards: (readonly [bigint, string])[] = high.map((w, i) => [10n ** BigInt(303 - 3 * i), `${w}illion`]);
  // prettier-ignore
  const mid: readonly (readonly [bigint, string])[] = [
    [1000n, 'thousand'], [100n, 'hundred'], [90n, 'ninety'], [80n, 'eighty'], [70n, 'seventy'],
    [60n, 'sixty'], [50n, 'fifty'], [40n, 'forty'], [30n, 'thirty'],
  ];
  cards.push(...mid);
  for (let n = 20; n >= 0; n--) cards.push([BigInt(n), LOW[n]]);
  return cards;
})();

/** num2words raises OverflowError from 1000 × the largest card (10^306) up. */
const MAXVAL = 1000n * CARDS[0][0];

// prettier-ignore
const ORDS: Readonly<Record<string, string>> = {
  one: 'first', two: 'second', three: 'third', four: 'fourth', five: 'fifth', six: 'sixth',
  seven: 'seventh', eight: 'eighth', nine: 'ninth', ten: 'tenth', eleven: 'eleventh', twelve: 'twelfth',
};

/** Python's `float()` syntax for a finite number (digits may be grouped with `_`). */
const PY_FLOAT = /^[+-]?(?:(?:\d(?:_?\d)*)?\.\d(?:_?\d)*|\d(?:_?\d)*\.?)(?:[eE][+-]?\d(?:_?\d)*)?$/;

/** `Num2Word_EN.merge`: joins two pieces with "-", " and ", " " (a multiple) or ", ". */
function merge([lt, ln]: Pair, [rt, rn]: Pair): Pair {
  if (ln === 1n && rn < 100n) return [rt, rn];
  if (100n > ln && ln > rn) return [`${lt}-${rt}`, ln + rn];
  if (ln >= 100n && 100n > rn) return [`${lt} and ${rt}`, ln + rn];
  if (rn > ln) return [`${lt} ${rt}`, ln * rn];
  return [`${lt}, ${rt}`, ln + rn];
}

/**
 * Python's `divmod(float, int)` (CPython `_float_div_mod`), for positive operands: the int becomes
 * the nearest double and the quotient is snapped to an integral value.
 */
function floatDivmod(vx: number, wx: number): [number, number] {
  const mod = vx % wx; // C fmod: exact
  const div = (vx - mod) / wx;
  if (div === 0) return [0, mod];
  let floordiv = Math.floor(div);
  if (div - floordiv > 0.5) floordiv += 1;
  return [floordiv, mod];
}

/**
 * `splitnum` followed by `clean`: the largest card not above `value`, the words for how many of
 * it, then the words for the rest. `value` is a non-negative bigint, or an integral double when
 * num2words was given a float such as 3.0 (its `divmod` then works in doubles, which this keeps).
 */
function split(value: bigint | number): Pair {
  // CARDS ends with 0, so a card is always found.
  const [elem, word] = CARDS.find(([e]) => e <= value) as readonly [bigint, string];
  let div: bigint | number;
  let mod: bigint | number;
  if (value === 0n || value === 0) [div, mod] = [1n, 0n];
  else if (typeof value === 'bigint') [div, mod] = [value / elem, value % elem];
  else [div, mod] = floatDivmod(value, Number(elem));
  // Python's `div == 1` holds for 1 and 1.0 alike.
  const head: Pair = div === 1n || div === 1 ? ['one', 1n] : split(div);
  const node = merge(head, [word, elem]);
  return mod === 0n || mod === 0 ? node : merge(node, split(mod));
}

/** `Num2Word_Base.to_cardinal` for an integer, or an integral double. */
function integerWords(value: bigint | number): string {
  let prefix = '';
  if (value < 0) {
    value = -value;
    prefix = 'minus ';
  }
  if (value >= MAXVAL) throw new RangeError(`abs(${value}) must be less than 10**306.`);
  return prefix + split(value)[0];
}

function toInteger(n: number | bigint, what: string): bigint {
  if (typeof n === 'bigint') return n;
  if (!Number.isInteger(n)) throw new RangeError(`${what} needs an integer, not ${n}`);
  return BigInt(n);
}

/**
 * `abs(Decimal(str(value)).as_tuple().exponent)`: how many decimal places Python's shortest repr
 * of `value` has. JavaScript's shortest form has the same number of significant digits.
 */
function reprPlaces(value: number): number {
  const [mantissa, exponent] = Math.abs(value).toExponential().split('e');
  const digits = mantissa.replace('.', '').length;
  return Math.abs(Number(exponent) - (digits - 1));
}

/**
 * `Num2Word_Base.to_cardinal_float` for a non-integral double: the truncated whole part, "point",
 * then one word per decimal place of the repr, the places taken from `frac × 10^places` in doubles
 * (rounded when within 0.01 of an integer, floored otherwise).
 */
function floatWords(value: number): string {
  const pre = Math.trunc(value);
  const precision = reprPlaces(value);
  const scale = Number(`1e${precision}`);
  // Python's int-to-float conversion of 10**precision overflows here.
  if (!Number.isFinite(scale)) throw new RangeError(`${value} has too many decimal places`);
  let post = Math.abs(value - pre) * scale;
  post = Math.abs(Math.round(post) - post) < 0.01 ? Math.round(post) : Math.floor(post);
  const digits = BigInt(post).toString().padStart(precision, '0');
  // 0.5.14 loses the sign of values between -1 and 0 here ("-0.5" → "zero point five").
  const out = [integerWords(BigInt(pre))];
  if (precision > 0) out.push('point');
  for (let i = 0; i < precision; i++) out.push(LOW[Number(digits[i])]);
  return out.join(' ');
}

/**
 * `num2words(n)` for an integer: 1234 → "one thousand, two hundred and thirty-four", -5 →
 * "minus five", 10n ** 27n → "one octillion".
 * @throws RangeError for a non-integral number, or when `|n|` ≥ 10^306 (num2words' OverflowError).
 */
export function cardinal(n: number | bigint): string {
  return integerWords(toInteger(n, 'cardinal'));
}

/**
 * `num2words(n, to='ordinal')`: 1 → "first", 21 → "twenty-first", 101 → "one hundred and first",
 * 0 → "zeroth".
 * @throws RangeError for a negative or non-integral number (num2words' TypeError), or one too large.
 */
export function ordinal(n: number | bigint): string {
  const value = toInteger(n, 'ordinal');
  if (value < 0n) throw new RangeError(`Cannot treat negative num ${value} as ordinal.`);
  const words = cardinal(value).split(' ');
  const parts = words[words.length - 1].split('-');
  const last = parts[parts.length - 1];
  parts[parts.length - 1] = ORDS[last] ?? `${last.endsWith('y') ? `${last.slice(0, -1)}ie` : last}th`;
  words[words.length - 1] = parts.join('-');
  return words.join(' ');
}

/**
 * `num2words(n, to='year')`: 1984 → "nineteen eighty-four", 1905 → "nineteen oh-five", 1900 →
 * "nineteen hundred", 2005 → "two thousand and five", -44 → "forty-four BC". Years of the form
 * 00XX or X00X, and from 10000 up, read as cardinals.
 * @throws RangeError for a non-integral number, or one too large.
 */
export function year(n: number): string {
  let value = toInteger(n, 'year');
  let suffix = '';
  if (value < 0n) {
    value = -value;
    suffix = ' BC';
  }
  const high = value / 100n;
  const low = value % 100n;
  let text: string;
  if (high === 0n || (high % 10n === 0n && low < 10n) || high >= 100n) text = cardinal(value);
  else {
    const lowText = low === 0n ? 'hundred' : low < 10n ? `oh-${cardinal(low)}` : cardinal(low);
    text = `${cardinal(high)} ${lowText}`;
  }
  return text + suffix;
}

/**
 * `num2words(float(text))`: "3.14" → "three point one four", "0.5" → "zero point five". The places
 * read are those of the double's repr, so "1.10" reads "one point one", and an integral value
 * reads as a cardinal ("3.0" → "three").
 * @throws RangeError when `text` is not a finite number in Python's `float()` syntax (NaN and
 * infinities included, which num2words rejects), or when num2words would overflow.
 */
export function decimal(text: string): string {
  const trimmed = text.trim();
  const value = PY_FLOAT.test(trimmed) ? Number(trimmed.replaceAll('_', '')) : NaN;
  if (!Number.isFinite(value)) throw new RangeError(`not a finite decimal number: ${JSON.stringify(text)}`);
  return Number.isInteger(value) ? integerWords(value) : floatWords(value);
}
