/**
 * espeak-ng compiled to WebAssembly (`@echogarden/espeak-ng-emscripten`: every language's
 * dictionary, no system library), called through espeak_TextToPhonemes, the same entry point
 * Kokoro's own front end (misaki, through Python's phonemizer) uses. One instance lives per thread
 * and is loaded on first use. The calls are synchronous WebAssembly: this module belongs in an
 * inference worker, never on the server's main thread.
 *
 * Why this build and not the `phonemizer` package kokoro-js uses: that one has English
 * dictionaries only and gets IPA by running espeak's synthesizer into a file, several times
 * slower; the `espeak-ng` package runs the command line, one new WebAssembly instance a call.
 * docs/experiments.md ("The espeak-ng build") has the figures.
 */

/** The slice of the Emscripten module and its espeak wrapper that is used here. */
interface EspeakModule {
  readonly HEAPU8: Uint8Array;
  eSpeakNGWorker: new () => EspeakWorker;
}
interface EspeakWorker {
  /** espeak_SetVoiceByName: 0 when the voice exists. */
  set_voice(name: string): number;
  /** espeak_TextToPhonemes over every clause; a pointer to a NUL-terminated UTF-8 string. */
  text_to_phonemes(text: string, mode: number): { ptr: number };
}

/** espeak_TextToPhonemes's mode: IPA (the wrapper separates phonemes with `_`). */
const IPA = 1;

export class EspeakError extends Error {
  override readonly name = 'EspeakError';
}

let loading: Promise<Espeak> | undefined;

/** This thread's espeak-ng, loaded once (its data file is 24 MB). */
export function loadEspeak(): Promise<Espeak> {
  loading ??= (async () => {
    // The package is untyped JavaScript (an Emscripten module factory); a variable specifier keeps
    // the compiler from looking for its types.
    const name = '@echogarden/espeak-ng-emscripten';
    const mod = (await import(name)) as { default: () => Promise<EspeakModule> };
    const module = await mod.default();
    return new Espeak(module, new module.eSpeakNGWorker());
  })();
  loading.catch(() => (loading = undefined));
  return loading;
}

export class Espeak {
  readonly #module: EspeakModule;
  readonly #worker: EspeakWorker;
  readonly #decoder = new TextDecoder();
  #voice = '';

  constructor(module: EspeakModule, worker: EspeakWorker) {
    this.#module = module;
    this.#worker = worker;
  }

  /**
   * IPA for text without clause punctuation (the caller keeps punctuation aside), with stress
   * marks. Clause breaks espeak finds anyway (a line break) become spaces, and its
   * language-switch flags (`(en)` around a foreign word) are removed, as misaki removes them.
   * With `tie`, the letters of each multi-letter phoneme are joined by it (`a^ɪ`), exactly where
   * espeak's own tie option puts it; misaki asks for `^` and maps the tied pairs to its symbols.
   */
  phonemes(text: string, voice: string, tie?: string): string {
    if (voice !== this.#voice) {
      if (this.#worker.set_voice(voice) !== 0) throw new EspeakError(`espeak-ng has no voice '${voice}'`);
      this.#voice = voice;
    }
    const { ptr } = this.#worker.text_to_phonemes(text, IPA);
    const heap = this.#module.HEAPU8;
    const end = heap.indexOf(0, ptr);
    const raw = this.#decoder
      .decode(heap.subarray(ptr, end < 0 ? ptr : end))
      .replace(/\([a-z-]+\)/gi, '')
      .replace(/\s*\|\s*/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
    // The wrapper separates phonemes with `_` (espeak's separator mode): one phoneme per piece.
    if (tie === undefined) return raw.replace(/_/g, '');
    return raw
      .split(' ')
      .map((word) =>
        word
          .split('_')
          .map((phoneme) => tieLetters(phoneme, tie))
          .join(''),
      )
      .join(' ');
  }
}

const STRESS = new Set(['ˈ', 'ˌ']);
const LETTER = /\p{L}/u;

/**
 * espeak's tie rule (GetTranslatedPhonemeString in espeak-ng's dictionary.c): inside one phoneme,
 * before every letter after the first that is not a modifier letter or combining mark
 * (U+02B0–U+036F). Stress marks are written before the phoneme and are not part of it.
 */
export function tieLetters(phoneme: string, tie: string): string {
  let out = '';
  let count = 0;
  for (const ch of phoneme) {
    if (count === 0 && STRESS.has(ch)) {
      out += ch;
      continue;
    }
    const c = ch.codePointAt(0)!;
    if (count > 0 && (c < 0x2b0 || c > 0x36f) && LETTER.test(ch)) out += tie;
    out += ch;
    count++;
  }
  return out;
}
