/**
 * The language registry (model/text/languages/): every language complete, the tables that name
 * languages derived from the modules, and a language that exists only as a registry entry read
 * through it.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VOICE_IDS, type LanguageCode } from '../../../model/kokoro/constants.ts';
import { DEFAULT_NORMALIZATION } from '../../../model/text/normalization-options.ts';
import {
  LANGUAGE_FACTS,
  REGISTRY,
  SERVED_LANGUAGES,
  isSupportedLanguage,
  parseLanguage,
  type Language,
} from '../../../model/text/languages/index.ts';
import { createRegistry } from '../../../model/text/languages/registry.ts';
import { parsePronunciationFile } from '../../../model/text/pronunciations/index.ts';
import { SAY_AS_KINDS } from '../../../model/text/say-as.ts';
import { CORPORA } from '../../../scripts/lib/corpora.ts';
import { projectPath } from '../../../scripts/lib/paths.ts';

const KOKORO_LETTERS = [...new Set(VOICE_IDS.map((id) => id[0]!))];

describe('language registry', () => {
  it("serves every Kokoro language, in Kokoro's order", () => {
    expect(SERVED_LANGUAGES).toEqual(KOKORO_LETTERS);
    expect(REGISTRY.languages.map((l) => l.code)).toEqual(KOKORO_LETTERS);
  });

  it.each(REGISTRY.languages.map((l) => [l.code, l] as const))('%s states everything', (_code, l) => {
    expect(l.name).toMatch(/^\p{Lu}/u);
    expect(l.tag).toMatch(/^[a-z]{2,3}(-[A-Z]{2})?$/);
    expect(l.plsTags.length).toBeGreaterThan(0);
    expect(l.warmUp.length).toBeGreaterThan(0);
    for (const text of l.warmUp) expect(text.trim()).not.toBe('');
    expect(typeof l.spaced).toBe('boolean');
    expect(typeof l.readsStressMarkup).toBe('boolean');
    for (const fn of [l.frontEnd, l.load, l.normalize, l.phonemize]) expect(typeof fn).toBe('function');
    expect(l.frontEnd()).toMatch(/^(misaki(-espeak|-ja|-zh)?|espeak-ng)$/);
    expect(['american', 'british', 'espeak', 'plain']).toContain(l.ipa);
  });

  it.each(REGISTRY.languages.map((l) => [l.code, l] as const))(
    '%s states how say-as reads it',
    (_code, l) => {
      const reading = l.sayAs!;
      expect(['english', 'espeak', 'japanese', 'chinese']).toContain(reading.family);
      for (const kind of reading.unsupported) expect(SAY_AS_KINDS).toContain(kind);
      expect(new Set(reading.unsupported).size).toBe(reading.unsupported.length);
      expect(reading.plus.trim()).not.toBe('');
      expect(reading.minus.trim()).not.toBe('');
      if (reading.family === 'english') expect(typeof reading.british).toBe('boolean');
      if (reading.family === 'espeak') {
        const { numbers } = reading;
        expect([',', '.']).toContain(numbers.decimal);
        expect(numbers.and.trim()).not.toBe('');
        expect(Object.keys(numbers.currencies).sort()).toEqual(['BRL', 'EUR', 'GBP', 'INR', 'JPY', 'USD']);
        for (const { unit, cent } of Object.values(numbers.currencies))
          for (const word of [...unit, ...cent]) expect(word.trim()).not.toBe('');
        if (!reading.unsupported.includes('ordinal')) expect(reading.ordinal('2', false)).toMatch(/^2\D/);
      }
    },
  );

  it("reads IPA and say-as by its G2P's conventions", () => {
    for (const l of REGISTRY.languages) {
      const espeak = l.frontEnd() === 'espeak-ng';
      expect(l.ipa === 'espeak', l.code).toBe(espeak);
      expect(l.sayAs?.family === 'espeak', l.code).toBe(espeak);
      const english = l.code === 'a' || l.code === 'b';
      expect(l.ipa === 'american' || l.ipa === 'british', l.code).toBe(english);
      expect(l.sayAs?.family === 'english', l.code).toBe(english);
    }
  });

  it('names a corpus for every language but English, one file each', () => {
    expect(REGISTRY.languages.filter((l) => l.corpus === undefined).map((l) => l.code)).toEqual(['a', 'b']);
    const files = readdirSync(projectPath('test', 'fixtures', 'corpora')).filter((f) => f.endsWith('.txt'));
    expect(
      Object.keys(CORPORA)
        .map((name) => `${name}.txt`)
        .sort(),
    ).toEqual(files.sort());
    for (const [name, code] of Object.entries(CORPORA)) expect(REGISTRY.find(code)?.corpus).toBe(name);
  });

  it('parses every letter, tag, alias and PLS tag to its language, in any case', () => {
    for (const l of REGISTRY.languages) {
      for (const name of [l.code, l.tag, ...l.aliases]) {
        expect(parseLanguage(name), name).toBe(l.code);
        expect(parseLanguage(name.toUpperCase()), name).toBe(l.code);
      }
      for (const tag of l.plsTags) expect(REGISTRY.parsePls(tag), tag).toBe(l.code);
      expect(isSupportedLanguage(l.code)).toBe(true);
    }
  });

  it('gives no name to two languages', () => {
    const names = REGISTRY.languages.flatMap((l) =>
      [l.code, l.tag, ...l.aliases].map((n) => n.toLowerCase()),
    );
    expect(new Set(names).size).toBe(names.length);
    const plsTags = REGISTRY.languages.flatMap((l) => l.plsTags.map((t) => t.toLowerCase()));
    expect(new Set(plsTags).size).toBe(plsTags.length);
  });

  it('refuses a registry where two languages claim one name or one letter', () => {
    const spanish = REGISTRY.find('e')!;
    const clash: Language = { ...REGISTRY.find('i')!, aliases: ['es'] };
    expect(() => createRegistry([spanish, clash])).toThrow(/"es" is claimed by both 'e' and 'i'/);
    expect(() => createRegistry([spanish, spanish])).toThrow(/'e' is registered twice/);
  });

  it('reads a PLS region only where the languages tell regions apart', () => {
    const cases = new Map<string, LanguageCode | undefined>([
      ['en-US', 'a'],
      ['en', 'a'],
      ['en-GB', 'b'],
      ['en-AU', undefined],
      ['fr-CA', 'f'],
      ['pt', 'p'],
      ['pt-PT', undefined],
      ['zh-TW', 'z'],
      ['cmn-Hans', 'z'],
      ['de', undefined],
    ]);
    for (const [tag, code] of cases) expect(REGISTRY.parsePls(tag), tag).toBe(code);
    expect(REGISTRY.plsNames).toBe('en-US, en-GB, es, fr, hi, it, ja, pt-BR or zh');
  });

  it('lists the facts the server needs, English twice under one ISO code', () => {
    expect(LANGUAGE_FACTS.map((l) => `${l.code} ${l.tag} ${l.iso}`)).toEqual([
      'a en-US en',
      'b en-GB en',
      'e es es',
      'f fr-FR fr',
      'h hi hi',
      'i it it',
      'j ja ja',
      'p pt-BR pt',
      'z zh-CN zh',
    ]);
  });
});

describe('a language added through the registry alone', () => {
  // A stand-in G2P: each letter a phoneme, so nothing real has to load.
  const klingon: Language = {
    code: 'x' as LanguageCode,
    name: 'Klingon',
    tag: 'tlh',
    aliases: ['klingon'],
    plsTags: ['tlh'],
    spaced: true,
    readsStressMarkup: false,
    ipa: 'plain',
    warmUp: ['nuqneH'],
    frontEnd: () => 'stand-in',
    load: () => Promise.resolve(),
    normalize: (text) => text.replace(/\d/g, (d) => ['pagh', "wa'", "cha'"][Number(d)] ?? d),
    phonemize: async (text) => text.toLowerCase().replace(/[^a-z ]/g, ''),
  };
  const registry = createRegistry([...REGISTRY.languages, klingon]);

  it('is named, normalized and phonemized through its entry', async () => {
    expect(registry.parse('TLH')).toBe('x');
    expect(registry.parse('klingon')).toBe('x');
    expect(registry.parsePls('tlh')).toBe('x');
    expect(registry.plsNames).toMatch(/, zh or tlh$/);
    expect(registry.normalize('Qapla 1', 'x' as LanguageCode)).toBe("Qapla wa'");
    // The switch every language honours: `normalize: false` sends the text as written.
    expect(
      registry.normalize('Qapla 1', 'x' as LanguageCode, { ...DEFAULT_NORMALIZATION, normalize: false }),
    ).toBe('Qapla 1');
    expect(await registry.phonemize("Qapla wa'", 'x' as LanguageCode)).toBe('qapla wa');
    // The others are read as before.
    expect(registry.normalize('3日', 'j')).toBe('さん日');
  });

  it('leaves the served registry as it is', () => {
    expect(parseLanguage('tlh')).toBeUndefined();
    expect(() => REGISTRY.normalize('x', 'x' as LanguageCode)).toThrow(/No normalization for language 'x'/);
    // A dictionary file naming it is refused, with the languages that are served.
    expect(() => parsePronunciationFile('{"x": {"a": "a"}}', 'p.json')).toThrow(
      /unknown language "x"; use one of: a, b, e, f, h, i, j, p, z or \*/,
    );
  });
});
