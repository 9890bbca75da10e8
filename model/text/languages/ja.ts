/**
 * Japanese as misaki reads it: kuromoji and misaki's kana table (japanese.ts), numbers as kana.
 * kuromoji and its dictionary load at the first Japanese sentence (or at warm-up), not before.
 */
import { latinWordReader } from '../espeak-g2p.ts';
import { loadJapanese, normalizeJapanese, phonemizeJapanese } from '../japanese.ts';
import type { Language } from './language.ts';

export const JAPANESE: Language = {
  code: 'j',
  name: 'Japanese',
  tag: 'ja',
  aliases: [],
  plsTags: ['ja'],
  spaced: false,
  readsStressMarkup: false,
  sayAs: {
    family: 'japanese',
    unsupported: ['date', 'time', 'currency', 'unit'],
    plus: 'プラス',
    minus: 'マイナス',
  },
  ipa: 'plain',
  corpus: 'ja',
  warmUp: [
    '明日の朝八時に電車が出ます。窓側の席を二つ予約しましょうか？',
    'お待たせしました、ご希望の日程と予算に合う便が三つ見つかりました。',
  ],
  frontEnd: () => 'misaki-ja',
  load: loadJapanese,
  normalize: (text) => normalizeJapanese(text),
  // Latin words in Japanese text are read as American English would read them.
  phonemize: async (text) => phonemizeJapanese(text, await latinWordReader(text)),
};
