/**
 * English words in no lexicon, as misaki reads them: espeak-ng's IPA with ties, mapped into
 * misaki's symbol set exactly as its `EspeakFallback` does (hexgrad/misaki `misaki/espeak.py`,
 * commit fba1236; Kokoro v1.0, so no version: `ɾ`→`T`, `ʔ`→`t` at the end). Without a lexicon the
 * whole text goes through this mapping, so the model still hears only misaki's symbols.
 */

/** misaki's E2M table, applied longest key first (a stable sort, as Python's). */
const E2M: readonly (readonly [string, string])[] = (
  [
    ['ʔˌn\u0329', 'ʔn'],
    ['ʔn\u0329', 'ʔn'],
    ['a^ɪ', 'I'],
    ['a^ʊ', 'W'],
    ['d^ʒ', 'ʤ'],
    ['e^ɪ', 'A'],
    ['e', 'A'],
    ['t^ʃ', 'ʧ'],
    ['ɔ^ɪ', 'Y'],
    ['ə^l', 'ᵊl'],
    ['ʲo', 'jo'],
    ['ʲə', 'jə'],
    ['ʲ', ''],
    ['ɚ', 'əɹ'],
    ['r', 'ɹ'],
    ['x', 'k'],
    ['ç', 'k'],
    ['ɐ', 'ə'],
    ['ɬ', 'l'],
    ['\u0303', ''],
  ] as const
).toSorted((a, b) => [...b[0]].length - [...a[0]].length);

/** espeak-ng's tied IPA (tie `^`) for one word → misaki's symbols. */
export function espeakToMisaki(tied: string, british: boolean): string {
  let ps = tied.trim();
  for (const [from, to] of E2M) ps = ps.replaceAll(from, to);
  ps = ps.replace(/(\S)\u0329/gu, 'ᵊ$1').replaceAll('\u0329', '');
  if (british) {
    ps = ps.replaceAll('e^ə', 'ɛː').replaceAll('iə', 'ɪə').replaceAll('ə^ʊ', 'Q');
  } else {
    ps = ps
      .replaceAll('o^ʊ', 'O')
      .replaceAll('ɜːɹ', 'ɜɹ')
      .replaceAll('ɜː', 'ɜɹ')
      .replaceAll('ɪə', 'iə')
      .replaceAll('ː', '');
  }
  ps = ps.replaceAll('o', 'ɔ'); // for espeak < 1.52, as misaki does
  ps = ps.replaceAll('ɾ', 'T').replaceAll('ʔ', 't');
  return ps.replaceAll('^', '');
}

/** The fallback misaki's G2P calls: text → misaki's symbols, rated 2 (its rating for espeak). */
export function espeakFallback(
  phonemes: (text: string) => string,
  british: boolean,
): (text: string) => readonly [string, number] | null {
  return (text) => {
    const tied = phonemes(text);
    if (tied.trim() === '') return null;
    return [espeakToMisaki(tied, british), 2];
  };
}
