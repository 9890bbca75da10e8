/**
 * Mandarin text → Kokoro phonemes, as misaki's ZHG2P does for Kokoro-82M v1.0 (its "legacy" path:
 * hexgrad/misaki, misaki/zh.py and misaki/transcription.py, itself adapted from
 * stefantaubert/pinyin-to-ipa): Arabic numerals to Chinese numerals, full-width punctuation to
 * ASCII, then each run of Han characters cut into words (jieba, here jieba-rs in WebAssembly, with
 * jieba's own dictionary), each word to tone-numbered pinyin (pinyin-pro here, pypinyin there),
 * each syllable to IPA with its tone as an arrow (→ ↗ ↓ ↘; the neutral tone has none), words
 * joined by spaces. Text between Han runs passes through as misaki passes it.
 *
 * Loaded at first use, as jieba's dictionary is slow to load (the README's Languages table has the
 * figure); calls are synchronous.
 */

/* ------------------------------------------------------------------------------------------------
 * Numbers and money (misaki: cn2an.transform(text, 'an2cn'))
 * ---------------------------------------------------------------------------------------------- */

const DIGITS = '零一二三四五六七八九';
const SMALL_UNITS = ['', '十', '百', '千'];
const BIG_UNITS = ['', '万', '亿', '万亿'];

/** Reads a digit string digit by digit: 2024 → 二零二四. */
export function digitsToZh(digits: string): string {
  return [...digits].map((d) => DIGITS[Number(d)]).join('');
}

/** Reads a whole number (up to 16 digits; longer ones digit by digit): 10 → 十, 10500 → 一万零五百. */
export function integerToZh(digits: string): string {
  const n = digits.replace(/^0+(?=\d)/, '');
  if (n.length > 16) return digitsToZh(n);
  if (n === '0') return DIGITS[0]!;
  const groups: string[] = [];
  for (let end = n.length; end > 0; end -= 4) groups.unshift(n.slice(Math.max(0, end - 4), end));
  let out = '';
  let zero = false;
  groups.forEach((group, gi) => {
    const big = BIG_UNITS[groups.length - 1 - gi]!;
    if (Number(group) === 0) {
      zero = out !== '';
      return;
    }
    const padded = group.padStart(4, '0');
    let part = '';
    for (let i = 0; i < 4; i++) {
      const d = Number(padded[i]);
      if (d === 0) {
        if (part !== '' || out !== '') zero = true;
        continue;
      }
      if (zero) part += DIGITS[0];
      zero = false;
      part += DIGITS[d]! + SMALL_UNITS[3 - i]!;
    }
    out += part + big;
  });
  // 一十 at the very start reads 十 (10 → 十, 15 → 十五, but 110 → 一百一十).
  return out.startsWith('一十') ? out.slice(1) : out;
}

function numberToZh(numeral: string): string {
  const negative = numeral.startsWith('-');
  const body = negative ? numeral.slice(1) : numeral;
  const [whole, fraction] = body.split('.');
  const words = integerToZh(whole!) + (fraction ? `点${digitsToZh(fraction)}` : '');
  return negative ? `负${words}` : words;
}

const CURRENCY: Readonly<Record<string, string>> = {
  '¥': '元',
  '￥': '元',
  $: '美元',
  US$: '美元',
  '€': '欧元',
  '£': '英镑',
  '₹': '卢比',
};
const NUMBER = String.raw`-?\d+(?:\.\d+)?`;
const MONEY = new RegExp(String.raw`(US\$|[¥￥$€£₹])\s?(${NUMBER})`, 'g');
// Each starts where a number starts, not inside one: from every digit of a long run a match
// would scan to the run's end (quadratic).
const PERCENT = new RegExp(String.raw`(?<![\d.])(${NUMBER})\s?[%％]`, 'g');
const FRACTION = /(?<![\d/])(\d+)\/(\d+)(?![\d/])/g;
const YEAR = /(?<!\d)(\d{2,4})(?=年)/g;
const PLAIN_NUMBER = new RegExp(NUMBER, 'g');
const GROUPED = /(?<=\d),(?=\d{3})/g;

/** Arabic numerals, money, percentages, fractions and years → Chinese numerals. */
export function numbersToZh(text: string): string {
  return text
    .replace(GROUPED, '')
    .replace(MONEY, (_m, sign: string, n: string) => numberToZh(n) + CURRENCY[sign]!)
    .replace(PERCENT, (_m, n: string) => `百分之${numberToZh(n)}`)
    .replace(FRACTION, (_m, a: string, b: string) => `${integerToZh(b)}分之${integerToZh(a)}`)
    .replace(YEAR, (_m, y: string) => digitsToZh(y))
    .replace(PLAIN_NUMBER, (n) => numberToZh(n));
}

/* ------------------------------------------------------------------------------------------------
 * Punctuation (misaki: ZHG2P.map_punctuation)
 * ---------------------------------------------------------------------------------------------- */

// prettier-ignore
const PUNCTUATION: readonly (readonly [string, string])[] = [
  ['、', ', '], ['，', ', '], ['。', '. '], ['．', '. '], ['！', '! '], ['：', ': '], ['；', '; '],
  ['？', '? '], ['«', ' “'], ['»', '” '], ['《', ' “'], ['》', '” '], ['「', ' “'], ['」', '” '],
  ['【', ' “'], ['】', '” '], ['（', ' ('], ['）', ') '],
];

export function mapZhPunctuation(text: string): string {
  let out = text;
  for (const [from, to] of PUNCTUATION) out = out.replaceAll(from, to);
  return out.trim();
}

/** What misaki does to a Mandarin sentence before phonemizing it. */
export function normalizeMandarin(text: string): string {
  return mapZhPunctuation(numbersToZh(text.normalize('NFC')));
}

/* ------------------------------------------------------------------------------------------------
 * Pinyin → IPA (misaki/transcription.py: the first variant of each mapping; misaki/zh.py: retone)
 * ---------------------------------------------------------------------------------------------- */

/** Tones as misaki's retone writes them; `0` in a final marks where the tone goes. */
const TONES: Readonly<Record<number, string>> = { 1: '→', 2: '↗', 3: '↓', 4: '↘', 5: '' };

// prettier-ignore
const INITIALS: Readonly<Record<string, string>> = {
  b: 'p', c: 'ʦʰ', ch: 'ꭧʰ', d: 't', f: 'f', g: 'k', h: 'x', j: 'ʨ', k: 'kʰ', l: 'l', m: 'm',
  n: 'n', p: 'pʰ', q: 'ʨʰ', r: 'ɻ', s: 's', sh: 'ʂ', t: 'tʰ', x: 'ɕ', z: 'ʦ', zh: 'ꭧ',
};

// `̯` (U+032F) marks a non-syllabic vowel; misaki deletes it at the end, so it is left out here.
// prettier-ignore
const FINALS: Readonly<Record<string, string>> = {
  a: 'a0', ai: 'ai0', an: 'a0n', ang: 'a0ŋ', ao: 'au0', e: 'ɤ0', ei: 'ei0', en: 'ə0n', eng: 'ə0ŋ',
  i: 'i0', ia: 'ja0', ian: 'jɛ0n', iang: 'ja0ŋ', iao: 'jau0', ie: 'je0', in: 'i0n', iou: 'jou0',
  ing: 'i0ŋ', iong: 'jʊ0ŋ', ong: 'ʊ0ŋ', ou: 'ou0', u: 'u0', uei: 'wei0', ua: 'wa0', uai: 'wai0',
  uan: 'wa0n', uen: 'wə0n', uang: 'wa0ŋ', ueng: 'wə0ŋ', uo: 'wo0', o: 'wo0', ü: 'y0', üe: 'ɥe0',
  üan: 'ɥɛ0n', ün: 'y0n',
};

/** Syllables without an initial+final split: syllabic consonants and interjections. */
// prettier-ignore
const WHOLE: Readonly<Record<string, string>> = {
  hm: 'hm0', hng: 'hŋ0', m: 'm0', n: 'n0', ng: 'ŋ0', io: 'jɔ0', ê: 'ɛ0', er: 'ɚ0', o: 'ɔ0',
};

const INITIAL_ORDER = ['zh', 'ch', 'sh', ...'bpmfdtnlgkhjqxrzcs'];

/**
 * Pinyin without its tone → strict initial and final, as pypinyin's to_initials/to_finals
 * (strict=True, v_to_u=True): y and w are not initials (ya → ia, wu → u, yu → ü), ü after j q x
 * is written u (ju → ü), and iu ui un are iou uei uen.
 */
export function splitPinyin(syllable: string): { initial: string; final: string } {
  const s = syllable.replace(/v/g, 'ü');
  const initial = INITIAL_ORDER.find((i) => s.startsWith(i) && s.length > i.length) ?? '';
  let final = s.slice(initial.length);
  if (initial === '') {
    if (final.startsWith('yu')) final = `ü${final.slice(2)}`;
    else if (final.startsWith('yi')) final = final.slice(1);
    else if (final.startsWith('y')) final = `i${final.slice(1)}`;
    else if (final.startsWith('wu')) final = final.slice(1);
    else if (final.startsWith('w')) final = `u${final.slice(1)}`;
  } else if ('jqx'.includes(initial) && final.startsWith('u')) final = `ü${final.slice(1)}`;
  if (final === 'iu') final = 'iou';
  else if (final === 'ui') final = 'uei';
  else if (final === 'un') final = 'uen';
  else if (final === 'ue') final = 'üe';
  return { initial, final };
}

/** One tone-numbered pinyin syllable (`zhong1`, `ma5`; 0 is read as 5) → IPA with its tone arrow. */
export function syllableToIpa(pinyin: string): string | undefined {
  const m = /^([a-zêü]+)([0-5])$/.exec(pinyin.toLowerCase().replace(/v/g, 'ü'));
  if (!m) return undefined;
  const tone = TONES[m[2] === '0' ? 5 : Number(m[2])]!;
  const normal = m[1]!;
  const whole = WHOLE[normal];
  if (whole !== undefined) return whole.replace('0', tone);
  const { initial, final } = splitPinyin(normal);
  let ipaFinal = FINALS[final];
  if (final === 'i' && ['zh', 'ch', 'sh', 'r', 'z', 'c', 's'].includes(initial)) ipaFinal = 'ɨ0';
  if (ipaFinal === undefined) return undefined;
  return (INITIALS[initial] ?? '') + ipaFinal.replace('0', tone);
}

/* ------------------------------------------------------------------------------------------------
 * The pipeline
 * ---------------------------------------------------------------------------------------------- */

interface Libraries {
  cut(text: string, hmm: boolean): string[];
  pinyin(word: string): string[];
}

let libraries: Libraries | undefined;

/** Loads jieba and pinyin-pro in this thread (once). */
export async function loadMandarin(): Promise<void> {
  if (libraries) return;
  const [jieba, pinyinPro] = await Promise.all([import('jieba-wasm'), import('pinyin-pro')]);
  // jieba builds its dictionary at the first cut: done here, so that loading includes it.
  jieba.cut('中文', true);
  libraries = {
    cut: (text, hmm) => jieba.cut(text, hmm),
    pinyin: (word) =>
      pinyinPro.pinyin(word, { toneType: 'num', type: 'array', toneSandhi: true, nonZh: 'removed' }),
  };
}

const HAN_RUNS = /[\u4E00-\u9FFF]+|[^\u4E00-\u9FFF]+/g;
const LATIN_WORD = /[A-Za-z][A-Za-z'-]*/g;
const HAN = /^[\u4E00-\u9FFF]/;

/**
 * A run of Han characters → IPA: pinyin for the whole run (so a character's reading is chosen in
 * its context, and 一 and 不 take the tones their neighbours give them, as pypinyin's phrase
 * dictionary gives misaki in the common phrases), then one syllable per character, words joined by
 * spaces. A syllable with no reading is skipped.
 */
function runToIpa(run: string, lib: Libraries): string {
  const syllables = lib.pinyin(run);
  const chars = [...run];
  if (syllables.length !== chars.length) {
    return lib
      .cut(run, true)
      .map((w) =>
        lib
          .pinyin(w)
          .map((py) => syllableToIpa(py) ?? '')
          .join(''),
      )
      .join(' ');
  }
  let at = 0;
  return lib
    .cut(run, true)
    .map((word) => {
      const n = [...word].length;
      const ipa = syllables
        .slice(at, at + n)
        .map((py) => syllableToIpa(py) ?? '')
        .join('');
      at += n;
      return ipa;
    })
    .join(' ');
}

/**
 * Already-normalized Mandarin (see normalizeMandarin) → Kokoro phonemes. Latin words between the
 * Han runs go to `english` when given (misaki v1.0 passes them through as letters).
 */
export async function phonemizeMandarin(text: string, english?: (word: string) => string): Promise<string> {
  if (!libraries) await loadMandarin();
  const lib = libraries!;
  let out = '';
  for (const [run] of text.matchAll(HAN_RUNS)) {
    if (HAN.test(run)) out += runToIpa(run, lib);
    else out += english ? run.replace(LATIN_WORD, (w) => english(w)) : run;
  }
  return out;
}
