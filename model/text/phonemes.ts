/**
 * Text → phonemes with espeak-ng (WebAssembly, see espeak.ts: works offline, no system library).
 * espeak drops punctuation, which Kokoro needs for prosody, so punctuation runs are cut out first,
 * kept verbatim, and the pieces glued back.
 *
 * Calls are synchronous WebAssembly, the first ones much longer: this module is meant to run
 * inside an inference worker, never on the server's main thread.
 */
import type { LanguageCode } from '../kokoro/constants.ts';
import { createEnglish, type English, type EnglishFrontEnd } from './en/english.ts';
import { loadEspeak, type Espeak } from './espeak.ts';
import { normalizeFor } from './normalize-intl.ts';
import { loadJapanese, phonemizeJapanese } from './japanese.ts';
import { loadMandarin, phonemizeMandarin } from './mandarin.ts';

/**
 * Languages this front end phonemizes with espeak-ng, with espeak-ng's voice for each (Kokoro's
 * pipeline asks espeak for es, fr-fr, hi, it and pt-br; `fr` is the voice of the language fr-fr).
 */
export const ESPEAK_VOICES: Partial<Record<LanguageCode, string>> = {
  a: 'en-us',
  b: 'en',
  e: 'es',
  f: 'fr',
  h: 'hi',
  i: 'it',
  p: 'pt-br',
};

const isEnglish = (lang: LanguageCode): lang is 'a' | 'b' => lang === 'a' || lang === 'b';

/** Where misaki's lexicons are (`KOKORO_LEXICON_DIR`); without them English runs misaki's espeak mapping. */
let lexiconDir: string | undefined;
const english: Partial<Record<'a' | 'b', English>> = {};

/** Names the directory of misaki's lexicon files for this thread, before English loads. */
export function configureEnglish(dir: string | undefined): void {
  lexiconDir = dir;
}

/**
 * The front end that reads `lang` in this thread: for English `misaki` (or `misaki-espeak`
 * without the lexicons), else misaki's own readers or espeak-ng with misaki's map.
 */
export function frontEndName(lang: LanguageCode): string {
  if (isEnglish(lang)) return englishFrontEnd(lang) ?? 'misaki-espeak';
  if (lang === 'j') return 'misaki-ja';
  if (lang === 'z') return 'misaki-zh';
  return 'espeak-ng';
}

/** Which English front end runs in this thread for `lang` (once loaded). */
export function englishFrontEnd(lang: 'a' | 'b'): EnglishFrontEnd | undefined {
  return english[lang]?.frontEnd;
}

/**
 * misaki's espeak-to-Kokoro map for every language but English (EspeakG2P.e2m in
 * hexgrad/misaki, misaki/espeak.py, as Kokoro v1.0 uses it: no version): tied letter pairs become
 * the single symbols Kokoro was trained on. Applied in misaki's order (sorted by key); the ties
 * and hyphens left over are then deleted.
 */
const MISAKI_E2M: readonly (readonly [string, string])[] = (
  [
    ['a^ɪ', 'I'],
    ['a^ʊ', 'W'],
    ['d^z', 'ʣ'],
    ['d^ʒ', 'ʤ'],
    ['e^ɪ', 'A'],
    ['o^ʊ', 'O'],
    ['ə^ʊ', 'Q'],
    ['s^s', 'S'],
    ['t^s', 'ʦ'],
    ['t^ʃ', 'ʧ'],
    ['ɔ^ɪ', 'Y'],
  ] as const
).toSorted(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** misaki's corrections of espeak's tied IPA (see MISAKI_E2M). */
export function misakiEspeakPhonemes(tied: string): string {
  let out = tied;
  for (const [from, to] of MISAKI_E2M) out = out.replaceAll(from, to);
  return out.replace(/\^/g, '').replace(/-/g, '');
}

/** Languages with a front end of their own: Japanese and Mandarin, as misaki reads them. */
const OWN_FRONT_ENDS = ['j', 'z'] as const;

export function isSupportedLanguage(lang: string): boolean {
  return Object.hasOwn(ESPEAK_VOICES, lang) || (OWN_FRONT_ENDS as readonly string[]).includes(lang);
}

// Kept verbatim between phonemized pieces; every one of these is in Kokoro's vocabulary or is
// mapped to a character that is (see normalize.ts).
const PUNCTUATION = ';:,.!?¡¿—…"«»“”()';
const isPunctuation = (ch: string | undefined): boolean => ch !== undefined && PUNCTUATION.includes(ch);
const isSpace = (ch: string | undefined): boolean => ch !== undefined && /\s/.test(ch);

let espeak: Espeak | undefined;

/** Loads espeak-ng in this thread (once). */
export async function loadPhonemizer(): Promise<void> {
  espeak ??= await loadEspeak();
}

/** Loads the front end of one language in this thread (once): espeak-ng, kuromoji or jieba. */
export async function loadLanguage(lang: LanguageCode): Promise<void> {
  if (lang === 'j') await loadJapanese();
  else if (lang === 'z') await loadMandarin();
  else await loadPhonemizer();
  if (isEnglish(lang) && english[lang] === undefined) {
    const voice = ESPEAK_VOICES[lang]!;
    const engine = espeak!;
    english[lang] = createEnglish(lang, lexiconDir, (text) => engine.phonemes(text, voice, '^'));
  }
}

// Varied text per language, so the WebAssembly engine's hot paths and the language's dictionary
// are loaded and compiled before the first request: cold, the first sentences of a language take
// tens of milliseconds; after this, about one.
const ENGLISH_WARM_UP = [
  'The quick brown fox jumps over the lazy dog; meanwhile, twelve wizards quickly boxed five jugs of liquid.',
  'How much would it cost to fly from London to New York next Thursday at seven thirty in the morning?',
  'Please remember: the meeting starts at nine, and everyone should bring their reports, charts and questions!',
  'Artificial intelligence systems are transforming healthcare, education, transportation and entertainment.',
];
const WARM_UP_TEXTS: Partial<Record<LanguageCode, readonly string[]>> = {
  a: ENGLISH_WARM_UP,
  b: ENGLISH_WARM_UP,
  e: [
    'El tren sale mañana a las ocho; ¿quieres que reserve dos asientos junto a la ventana?',
    'Gracias por esperar, encontré tres vuelos que coinciden con tus fechas y tu presupuesto.',
  ],
  f: [
    'Le train part demain à huit heures ; voulez-vous que je réserve deux places près de la fenêtre ?',
    "Merci d'avoir patienté, j'ai trouvé trois vols qui correspondent à vos dates et à votre budget.",
  ],
  h: [
    'ट्रेन कल सुबह आठ बजे निकलेगी, क्या मैं खिड़की के पास दो सीटें आरक्षित कर दूँ?',
    'इंतज़ार के लिए धन्यवाद, मुझे आपकी तारीखों और बजट से मेल खाती तीन उड़ानें मिलीं।',
  ],
  i: [
    'Il treno parte domani alle otto; vuoi che prenoti due posti vicino al finestrino?',
    'Grazie per aver aspettato, ho trovato tre voli che corrispondono alle tue date e al tuo budget.',
  ],
  p: [
    'O trem sai amanhã às oito horas; você quer que eu reserve dois lugares perto da janela?',
    'Obrigado por esperar, encontrei três voos que combinam com as suas datas e o seu orçamento.',
  ],
  j: [
    '明日の朝八時に電車が出ます。窓側の席を二つ予約しましょうか？',
    'お待たせしました、ご希望の日程と予算に合う便が三つ見つかりました。',
  ],
  z: [
    '火车明天早上八点出发，要我帮你预订两个靠窗的座位吗？',
    '让你久等了，我找到了三个符合你日期和预算的航班。',
  ],
};

/** Loads espeak-ng and runs it over varied text in each of `langs`. */
export async function warmUpPhonemizer(langs: readonly LanguageCode[], rounds = 3): Promise<void> {
  await loadPhonemizer();
  for (const lang of langs) await loadLanguage(lang);
  for (let r = 0; r < rounds; r++) {
    for (const lang of langs) {
      for (const text of WARM_UP_TEXTS[lang] ?? []) await phonemize(normalizeFor(text, lang), lang);
    }
  }
}

/**
 * Splits text into alternating word runs and punctuation runs, keeping both. A punctuation run is
 * punctuation with the white space around it, and further punctuation after that white space
 * (`", - "`). One pass, each character looked at a bounded number of times: linear in the text.
 */
export function splitOnPunctuation(text: string): { text: string; punctuation: boolean }[] {
  const parts: { text: string; punctuation: boolean }[] = [];
  const n = text.length;
  let wordStart = 0;
  let i = 0;
  while (i < n) {
    if (!isPunctuation(text[i])) {
      i++;
      continue;
    }
    // The run takes the white space just before it (never before the current word run began).
    let start = i;
    while (start > wordStart && isSpace(text[start - 1])) start--;
    let end = i;
    for (;;) {
      while (end < n && isPunctuation(text[end])) end++;
      let k = end;
      while (k < n && isSpace(text[k])) k++;
      end = k;
      if (!isPunctuation(text[k])) break;
    }
    if (start > wordStart) parts.push({ text: text.slice(wordStart, start), punctuation: false });
    parts.push({ text: text.slice(start, end), punctuation: true });
    wordStart = i = end;
  }
  if (wordStart < n) parts.push({ text: text.slice(wordStart), punctuation: false });
  return parts;
}

/**
 * Phonemizes already-normalized text for a supported language: each word run on its own (espeak
 * keeps its voice loaded between calls), punctuation runs verbatim between them.
 */
export async function phonemize(text: string, lang: LanguageCode): Promise<string> {
  if (lang === 'j' || lang === 'z') {
    // Latin words in Japanese or Chinese text are read as American English would read them.
    if (/[A-Za-z]/.test(text)) espeak ??= await loadEspeak();
    const english = (word: string) => espeak!.phonemes(word, ESPEAK_VOICES.a!);
    return lang === 'j' ? phonemizeJapanese(text, english) : phonemizeMandarin(text, english);
  }
  const voice = ESPEAK_VOICES[lang];
  if (!voice) throw new Error(`No phonemizer for language '${lang}'`);
  espeak ??= await loadEspeak();
  if (isEnglish(lang)) {
    await loadLanguage(lang);
    // KPipeline joins misaki's tokens with single spaces and strips the ends.
    return english[lang]!.phonemize(text).phonemes.replace(/\s+/g, ' ').trim();
  }
  const pieces: string[] = [];
  for (const part of splitOnPunctuation(text)) {
    if (part.punctuation) pieces.push(part.text);
    else if (part.text.trim() !== '') {
      // Keep the spaces around a word run, so "a, b" stays two words in the phoneme string.
      const lead = /^\s/.test(part.text) ? ' ' : '';
      const trail = /\s$/.test(part.text) ? ' ' : '';
      const word = part.text.trim();
      pieces.push(lead + misakiEspeakPhonemes(espeak.phonemes(word, voice, '^')) + trail);
    }
  }
  return pieces.join('').replace(/ {2,}/g, ' ').trim();
}
