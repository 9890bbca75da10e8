/**
 * English, American (`a`) and British (`b`): misaki's G2P (lexicons, rules, tagger) with espeak-ng
 * for words in no lexicon (en/), normalized by normalize.ts. Without misaki's lexicon files the
 * G2P runs misaki's espeak mapping alone (`misaki-espeak`).
 */
import { createEnglish, type English, type EnglishFrontEnd } from '../en/english.ts';
import { loadedEspeak, loadPhonemizer } from '../espeak-g2p.ts';
import { normalizeText } from '../normalize.ts';
import type { Language } from './language.ts';

type EnglishCode = 'a' | 'b';

/** Where misaki's lexicons are (`KOKORO_LEXICON_DIR`); without them English runs misaki's espeak mapping. */
let lexiconDir: string | undefined;
const loaded: Partial<Record<EnglishCode, English>> = {};

/** Names the directory of misaki's lexicon files for this thread, before English loads. */
export function configureEnglish(dir: string | undefined): void {
  lexiconDir = dir;
}

/** Which English front end runs in this thread for `lang` (once loaded). */
export function englishFrontEnd(lang: EnglishCode): EnglishFrontEnd | undefined {
  return loaded[lang]?.frontEnd;
}

const WARM_UP = [
  'The quick brown fox jumps over the lazy dog; meanwhile, twelve wizards quickly boxed five jugs of liquid.',
  'How much would it cost to fly from London to New York next Thursday at seven thirty in the morning?',
  'Please remember: the meeting starts at nine, and everyone should bring their reports, charts and questions!',
  'Artificial intelligence systems are transforming healthcare, education, transportation and entertainment.',
];

function english(
  code: EnglishCode,
  facts: Pick<Language, 'name' | 'tag' | 'plsTags'>,
  espeakVoice: string,
): Language {
  const load = async () => {
    await loadPhonemizer();
    if (loaded[code] === undefined) {
      const engine = loadedEspeak();
      loaded[code] = createEnglish(code, lexiconDir, (text) => engine.phonemes(text, espeakVoice, '^'));
    }
  };
  return {
    code,
    ...facts,
    aliases: [],
    spaced: true,
    readsStressMarkup: true,
    sayAs: { family: 'english', british: code === 'b', unsupported: [], plus: 'plus', minus: 'minus' },
    ipa: code === 'a' ? 'american' : 'british',
    warmUp: WARM_UP,
    frontEnd: () => englishFrontEnd(code) ?? 'misaki-espeak',
    load,
    normalize: (text, options) => normalizeText(text, code, { ...options, misaki: true }),
    async phonemize(text) {
      await load();
      // KPipeline joins misaki's tokens with single spaces and strips the ends.
      return loaded[code]!.phonemize(text).phonemes.replace(/\s+/g, ' ').trim();
    },
  };
}

export const AMERICAN_ENGLISH = english(
  'a',
  { name: 'American English', tag: 'en-US', plsTags: ['en-US', 'en'] },
  'en-us',
);

export const BRITISH_ENGLISH = english(
  'b',
  { name: 'British English', tag: 'en-GB', plsTags: ['en-GB'] },
  'en',
);
