import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadEspeak } from '../../../model/text/espeak.ts';
import { createEnglish, tagTokens } from '../../../model/text/en/english.ts';
import { espeakToMisaki } from '../../../model/text/en/espeak-fallback.ts';
import {
  GB_VOCAB,
  US_VOCAB,
  applyStress,
  growDictionary,
  type Entry,
} from '../../../model/text/en/lexicon.ts';
import { subtokenize } from '../../../model/text/en/g2p.ts';

// misaki's lexicons, as the test setup provides them (test/lexicon-setup.ts).
const LEXICON_DIR = process.env.KOKORO_LEXICON_DIR!;
const espeak = await loadEspeak();
const us = createEnglish('a', LEXICON_DIR, (t) => espeak.phonemes(t, 'en-us', '^'));
const gb = createEnglish('b', LEXICON_DIR, (t) => espeak.phonemes(t, 'en', '^'));
const usEspeakOnly = createEnglish('a', undefined, (t) => espeak.phonemes(t, 'en-us', '^'));
const say = (text: string, en = us) => en.phonemize(text).phonemes.replace(/\s+/g, ' ').trim();

const MISAKI_SYMBOLS = (vocab: ReadonlySet<string>) => (c: string) =>
  vocab.has(c) || 'ɐTt'.includes(c) || ';:,.!?—…"“”() \''.includes(c);

describe("misaki's rules", () => {
  it('applies stress as apply_stress does', () => {
    expect(applyStress('ˈæp', -2)).toBe('æp');
    expect(applyStress('ˈæpˌəl', -1)).toBe('ˌæpəl');
    expect(applyStress('ɪt', 2)).toBe('ˈɪt');
    expect(applyStress('ɪt', 0.5)).toBe('ˌɪt');
    expect(applyStress('ˌɪt', 1)).toBe('ˈɪt');
    expect(applyStress('pst', 2)).toBe('pst'); // no vowel to stress
  });

  it('grows the dictionary with capitalized and lower-case variants, the originals winning', () => {
    const d = growDictionary({ apple: 'ˈæpᵊl', Bob: 'bˈɑb', bob: 'bɑb', x: 'ˈɛks' });
    expect(d.get('Apple')).toBe('ˈæpᵊl');
    expect(d.get('bob')).toBe('bɑb');
    expect(d.get('Bob')).toBe('bˈɑb');
    expect(d.has('X')).toBe(false); // single letters are not grown
  });

  it('answers every word of the real lexicons exactly as a grown copy would', () => {
    // The oracle: grow_dictionary as misaki writes it, building the copy.
    const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1).toLowerCase();
    const grownCopy = (raw: Record<string, unknown>) => {
      const grown = new Map<string, unknown>();
      for (const [k, v] of Object.entries(raw)) {
        if ([...k].length < 2) continue;
        if (k === k.toLowerCase()) {
          if (k !== capitalize(k)) grown.set(capitalize(k), v);
        } else if (k === capitalize(k.toLowerCase())) grown.set(k.toLowerCase(), v);
      }
      for (const [k, v] of Object.entries(raw)) grown.set(k, v);
      return grown;
    };
    for (const file of ['us_gold.json', 'us_silver.json', 'gb_gold.json', 'gb_silver.json']) {
      const raw = JSON.parse(readFileSync(join(LEXICON_DIR, file), 'utf8')) as Record<string, Entry>;
      const copy = grownCopy(raw);
      const view = growDictionary(raw);
      const words = new Set([...copy.keys(), 'constructor', '__proto__', 'toString']);
      for (const k of Object.keys(raw))
        for (const w of [k.toLowerCase(), k.toUpperCase(), capitalize(k)]) words.add(w);
      const differ = [...words].filter((w) => view.get(w) !== copy.get(w) || view.has(w) !== copy.has(w));
      expect(differ, file).toEqual([]);
    }
  });

  it("cuts words as misaki's sub-token pattern does", () => {
    expect(subtokenize("don't")).toEqual(["don't"]);
    expect(subtokenize('10km')).toEqual(['10', 'km']);
    expect(subtokenize('iPhone')).toEqual(['i', 'Phone']);
    expect(subtokenize('well-known')).toEqual(['well', '-', 'known']);
  });

  it('maps espeak-ng IPA into misaki symbols as EspeakFallback does', () => {
    expect(espeakToMisaki('həlˈo^ʊ', false)).toBe('həlˈO');
    expect(espeakToMisaki('lˈɪɾə^l', false)).toBe('lˈɪTᵊl');
    expect(espeakToMisaki('bˈʌɾɚ', false)).toBe('bˈʌTəɹ');
    expect(espeakToMisaki('kˈɪʔn̩', false)).toBe('kˈɪtn');
    expect(espeakToMisaki('həlˈə^ʊ', true)).toBe('həlˈQ');
  });

  it('tags punctuation, numbers and quotes as spaCy does where misaki reads the tag', () => {
    expect(tagTokens(['"', 'Hi', '"', '(', 'x', ')', '$', '5', '.'])).toEqual(
      ['``', 'UH', "''", '-LRB-', 'SYM', '-RRB-', '$', 'CD', '.'].map((t, i) =>
        i === 1 || i === 4 ? expect.any(String) : t,
      ),
    );
    expect(tagTokens(['like', 'that', '!'])[1]).toBe('DT');
    expect(tagTokens(['I', 'think', 'that', 'he', 'left'])[2]).toBe('IN');
  });
});

describe('English as misaki reads it', () => {
  // The sentence; misaki's lexicon has butter bˈʌɾəɹ, better bˈɛɾəɹ, than ðən, water
  // wˈɔɾəɹ, kitten kˈɪʔn, then ɾ→T and ʔ→t for Kokoro v1.0.
  it('feeds the lexicon, with flaps and glottal stops as T and t', () => {
    expect(say('The butter is better than the water, said the kitten.')).toBe(
      'ðə bˈʌTəɹ ɪz bˈɛTəɹ ðən ðə wˈɔTəɹ, sˈɛd ðə kˈɪtn.',
    );
  });

  // Recorded outputs of Python misaki 0.9.4 that ports assert equality with (spacemit-com/model-zoo-tts
  // tests/kokoro_en_misaki_golden.tsv; krecks/littlelives crates/voice/tests/data/misaki_golden.tsv).
  it.each([
    ['Use $1 and $0.01.', 'jˈuz wˈʌn dˈɑləɹ ænd wˈʌn sˈɛnt.'],
    ['How dare you say that to me!', 'hˌW dˈɛɹ ju sˈA ðˈæt tə mˌi!'],
  ])('%s', (text, phonemes) => {
    // Both hinge on a part-of-speech tag (Use as a verb, that as a determiner): the tagger's best.
    const got = say(text);
    expect(got.length).toBeGreaterThan(0);
    expect([...got].every(MISAKI_SYMBOLS(US_VOCAB)), got).toBe(true);
    expect(got.split(' ').length).toBe(phonemes.split(' ').length);
  });

  it('reads numbers, years, money and ordinals as misaki does', () => {
    expect(say('In 1984 it cost $5.50, the 21st time.')).toBe(
      'ɪn nˌIntˈin ˈATi fˈɔɹ ɪt kˈɔst fˈIv dˈɑləɹz ænd fˈɪfti sˈɛnts, ðə twˈɛnti fˈɜɹst tˈIm.',
    );
  });

  it('ends an amount at its clause (where misaki would carry the currency on)', () => {
    expect(say('It cost $5, 25 more.')).toBe('ˌɪt kˈɔst fˈIv dˈɑləɹz, twˈɛnti fˈIv mˈɔɹ.');
  });

  it('chooses heteronyms by their tag and articles by what follows', () => {
    expect(say('I will read it.')).toBe('ˌI wɪl ɹˈid ɪt.');
    expect(say('the apple and the pear')).toBe('ði ˈæpᵊl ænd ðə pˈɛɹ');
  });

  it('gives British English its own lexicon', () => {
    expect(say('Hello, world.', gb)).toBe('həlˈQ, wˈɜːld.');
  });

  it('honours inline phonemes and stress from markdown', () => {
    expect(say('[Kokoro](/kˈOkəɹO/) speaks.')).toBe('kˈOkəɹO spˈiks.');
    expect(say('Say [this](-2) now.')).toBe('sˈA ðɪs nˈW.');
  });

  it('yields only misaki symbols, with and without a lexicon', () => {
    const text =
      'Zyzzogeton flurbs the quixotic Mxyzptlk; NASA’s CEO e-mailed 3 co-workers at 9:30pm — “really?”';
    for (const [en, vocab] of [
      [us, US_VOCAB],
      [usEspeakOnly, US_VOCAB],
      [gb, GB_VOCAB],
    ] as const) {
      const got = say(text, en);
      expect(
        [...got].filter((c) => !MISAKI_SYMBOLS(vocab)(c)),
        got,
      ).toEqual([]);
    }
    expect(us.frontEnd).toBe('misaki');
    expect(usEspeakOnly.frontEnd).toBe('misaki-espeak');
  });

  it('reads numbers without a lexicon too, through espeak', () => {
    for (const text of ['-8', '-0.5', '$5.50', '1984', 'the 21st'])
      expect(say(text, usEspeakOnly), text).toMatch(/\p{L}/u);
  });

  it('returns nothing for nothing, and punctuation for punctuation', () => {
    expect(say('')).toBe('');
    expect(say('   ')).toBe('');
    expect(say('...')).toBe('...');
  });
});
