/**
 * Mandarin Chinese as misaki reads it: jieba, pinyin-pro and misaki's pinyin → IPA (mandarin.ts),
 * numbers and punctuation in Chinese. jieba and pinyin-pro load at the first Mandarin sentence
 * (or at warm-up), not before.
 */
import { latinWordReader } from '../espeak-g2p.ts';
import { loadMandarin, normalizeMandarin, phonemizeMandarin } from '../mandarin.ts';
import type { Language } from './language.ts';

export const MANDARIN: Language = {
  code: 'z',
  name: 'Mandarin Chinese',
  tag: 'zh-CN',
  aliases: ['zh', 'cmn'],
  plsTags: ['zh', 'cmn'],
  spaced: false,
  readsStressMarkup: false,
  sayAs: { family: 'chinese', unsupported: ['unit'], plus: '加', minus: '负' },
  ipa: 'plain',
  corpus: 'zh',
  warmUp: [
    '火车明天早上八点出发，要我帮你预订两个靠窗的座位吗？',
    '让你久等了，我找到了三个符合你日期和预算的航班。',
  ],
  frontEnd: () => 'misaki-zh',
  load: loadMandarin,
  normalize: (text) => normalizeMandarin(text),
  // Latin words in Chinese text are read as American English would read them.
  phonemize: async (text) => phonemizeMandarin(text, await latinWordReader(text)),
};
