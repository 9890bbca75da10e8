/**
 * A request's text as the engine speaks it when it holds markup: sentences (each with its voice,
 * speed and fixed readings), pauses and marks, in order. The markup parser (text/markup.ts) reads
 * the constructs; this turns its events into segments:
 *
 * 1. text, and the spans whose reading is fixed (inline phonemes, `sub`, `say-as`, stress), go to
 *    the sentence chunker, each fixed span as one placeholder character, so no sentence ends
 *    inside one and the chunker's rules (the first chunk, abbreviations, the length limit) hold;
 * 2. a pause, a mark, a voice or rate change and a paragraph or sentence element end the sentence
 *    there: a pause inside a sentence splits its inference, so the silence lands where it is written;
 * 3. each sentence becomes parts: the placeholders their fixed readings back, the text between them
 *    read through the pronunciation dictionary (text/pronunciations/).
 *
 * Fed whole or piece by piece (streamed text), it gives the same segments.
 */
import { ttsError } from '../../protocol/errors.ts';
import { SPEED_MAX, SPEED_MIN, codePointLength } from '../../protocol/request.ts';
import type { LanguageCode } from '../kokoro/constants.ts';
import type { ResolvedVoice } from '../kokoro/voices.ts';
import { foreignPhonemeSymbols, ipaToKokoro } from '../text/ipa.ts';
import { MarkupParser, type MarkupEvent, type MarkupLimits, type MarkupMode } from '../text/markup.ts';
import { displayText, spokenChars, type SpeechPart } from '../text/parts.ts';
import { applyPronunciations, type PronunciationMatcher } from '../text/pronunciations/index.ts';
import { sayAs } from '../text/say-as.ts';
import { IncrementalSentenceChunker } from '../text/sentences.ts';

/** One thing the request's audio holds, in order. */
export type Segment =
  /** A sentence, synthesized with its voice and speed. */
  | {
      readonly kind: 'speech';
      readonly parts: readonly SpeechPart[];
      readonly voice: ResolvedVoice;
      readonly speed: number;
    }
  /** Silence of exactly `ms` milliseconds (rounded to whole samples at 24 kHz). */
  | { readonly kind: 'pause'; readonly ms: number }
  /** A named point in the audio (SSML `<mark>`), reported with its time. */
  | { readonly kind: 'mark'; readonly name: string };

/** Stands for one span with a fixed reading inside the chunker's text: a private-use character. */
const PLACEHOLDER = '\uE000';

export interface ScriptSettings {
  /** The request's voice, and its speed (markup's rates multiply it). */
  readonly voice: ResolvedVoice;
  readonly speed: number;
  /** The request's `lang`, when it named one: voices that markup switches to read in it too. */
  readonly lang?: string;
  /** A voice spec (a markup `[voice:…]` or `<voice name>`) → the voice, as the request's voice is resolved. */
  readonly resolveVoice: (spec: string, lang?: string) => ResolvedVoice;
  /** The pronunciation dictionary for a language, if any. */
  readonly pronunciations?: (lang: LanguageCode) => PronunciationMatcher | undefined;
  readonly firstChunkMinChars: number;
  readonly mode?: MarkupMode;
  readonly limits?: Partial<MarkupLimits>;
  /** What the text may make, whatever its markup; unbounded when absent. */
  readonly bounds?: ScriptBounds;
}

/**
 * Bounds on what a text makes, checked where it is known: after its pronunciations and aliases
 * are applied, not on the text as sent.
 */
export interface ScriptBounds {
  /**
   * The most characters its sentences may speak (their readings: aliases, say-as, dictionary
   * entries); for a streamed text, the most its readings may add to what was written.
   */
  readonly chars: number;
  /** The most milliseconds of pauses in all. */
  readonly pauseMs: number;
  /** The text is streamed (an utterance): `chars` bounds what its readings add. */
  readonly streamed: boolean;
}

/** A sentence's parts: its text read through the dictionary; `at`: where it starts in the request's text. */
export function textParts(
  text: string,
  matcher: PronunciationMatcher | undefined,
  at?: number,
): readonly SpeechPart[] {
  const parts = matcher ? applyPronunciations(text, matcher) : [{ text }];
  if (at === undefined) return parts;
  let from = at;
  return parts.map((part) => {
    const placed = { ...part, at: from, to: from + part.text.length };
    from += part.text.length;
    return placed;
  });
}

export class Segmenter {
  readonly #settings: ScriptSettings;
  readonly #parser: MarkupParser;
  readonly #chunker: IncrementalSentenceChunker;
  /** The fixed readings whose placeholders are in the chunker, in order. */
  readonly #fixed: SpeechPart[] = [];
  /**
   * Where the chunker's text came from, for the words' offsets: what it was fed and has not yet
   * returned (`#fed`, starting at `#fedAt` of all it was fed), and runs that map a position in
   * that stream to one in the request's text.
   */
  #fed = '';
  #fedAt = 0;
  #runs: { readonly pos: number; readonly source: number }[] = [];
  readonly #warnings: string[] = [];
  #voice: ResolvedVoice;
  #speed: number;
  /**
   * Code points spoken by the sentences handed out, and how many of them their readings added to
   * what was written (negative where a reading is shorter); milliseconds of pauses.
   */
  #spoken = 0;
  #added = 0;
  #pausedMs = 0;
  /** A sentence dropped by the bounds since the last read: reported by the next. */
  #dropped: unknown;

  constructor(settings: ScriptSettings) {
    this.#settings = settings;
    this.#parser = new MarkupParser(settings.mode ?? 'auto', settings.limits);
    this.#chunker = new IncrementalSentenceChunker({ firstChunkMinChars: settings.firstChunkMinChars });
    this.#voice = settings.voice;
    this.#speed = settings.speed;
  }

  /** What markup was dropped (its text spoken): one sentence per kind. */
  get warnings(): readonly string[] {
    return [...this.#parser.warnings, ...this.#warnings];
  }

  /** Text received and not yet handed out as a segment. */
  get buffered(): string {
    return this.#chunker.buffered;
  }

  /** Characters the parser holds while a construct is incomplete. */
  get held(): number {
    return this.#parser.heldChars;
  }

  /** Adds text; returns the segments it completed. Throws a TtsError (`invalid_markup`, …). */
  push(text: string): Segment[] {
    const { segments, error } = this.read(text);
    if (error !== undefined) throw error;
    return segments;
  }

  /** The text is complete: returns the rest. An unterminated construct is an `invalid_markup` error. */
  end(): Segment[] {
    const { segments, error } = this.read(undefined);
    if (error !== undefined) throw error;
    return segments;
  }

  /**
   * Adds text (`undefined`: the text is complete) and returns the segments it completed, and the
   * first construct that could not be spoken: that one is skipped and the rest read on, so a
   * streamed text goes on after it.
   */
  read(text: string | undefined): { segments: Segment[]; error?: unknown } {
    let events: MarkupEvent[];
    let error: unknown;
    try {
      events = text === undefined ? this.#parser.end() : this.#parser.push(text);
    } catch (err) {
      error = err;
      events = this.#parser.takeRecovered();
    }
    const segments = this.#events(events, text === undefined, (err) => (error ??= err));
    error ??= this.#dropped;
    this.#dropped = undefined;
    return error === undefined ? { segments } : { segments, error };
  }

  /** Speaks what the chunker holds now (an idle streamed utterance), without ending the text. */
  flushSentence(): Segment[] {
    const out = this.#sentences(this.#chunker.flush());
    // What is left is white space no sentence holds.
    this.#fedAt += this.#fed.length;
    this.#fed = '';
    return out;
  }

  /** Feeds the chunker `text`, written at `source` in the request's text. */
  #feed(text: string, source: number): string[] {
    this.#runs.push({ pos: this.#fedAt + this.#fed.length, source });
    this.#fed += text;
    return this.#chunker.feed(text);
  }

  /** Where position `pos` of the chunker's stream was written in the request's text. */
  #sourceAt(pos: number): number {
    let run = this.#runs[0]!;
    for (const r of this.#runs) if (r.pos <= pos) run = r;
    return run.source + (pos - run.pos);
  }

  #events(events: readonly MarkupEvent[], final: boolean, failed: (error: unknown) => void): Segment[] {
    const out: Segment[] = [];
    for (const event of events) {
      try {
        this.#event(event, out);
      } catch (err) {
        failed(err); // that event is skipped (a voice that does not exist, foreign phonemes)
      }
    }
    if (final) out.push(...this.flushSentence());
    return out;
  }

  #event(event: MarkupEvent, out: Segment[]): void {
    switch (event.type) {
      case 'text':
        // A private-use character the user wrote must not be read as a placeholder.
        out.push(...this.#sentences(this.#feed(event.text.replaceAll(PLACEHOLDER, ' '), event.start)));
        break;
      case 'phonemes':
        this.#pushFixed({ text: event.text, phonemes: this.#checkedPhonemes(event) }, event, out);
        break;
      case 'alias':
        this.#pushFixed({ text: event.text, spoken: event.spoken }, event, out);
        break;
      case 'stress':
        this.#pushFixed({ text: event.text, stress: event.stress }, event, out);
        break;
      case 'say-as': {
        const read = sayAs(event.interpretAs, event.text, this.#voice.lang, {
          ...(event.format !== undefined ? { format: event.format } : {}),
          ...(event.detail !== undefined ? { detail: event.detail } : {}),
        });
        if ('spoken' in read) this.#pushFixed({ text: event.text, spoken: read.spoken }, event, out);
        else {
          this.#warn(read.unsupported);
          out.push(...this.#sentences(this.#feed(event.text, event.start)));
        }
        break;
      }
      case 'pause':
        // The sentence before ends here even when the pause is skipped.
        out.push(...this.flushSentence());
        this.#checkPause(event.ms);
        out.push({ kind: 'pause', ms: event.ms });
        break;
      case 'mark':
        out.push(...this.flushSentence(), { kind: 'mark', name: event.name });
        break;
      case 'boundary':
        out.push(...this.flushSentence());
        break;
      case 'style':
        out.push(...this.flushSentence());
        this.#voice =
          event.style.voice === undefined
            ? this.#settings.voice
            : this.#settings.resolveVoice(event.style.voice, this.#settings.lang);
        this.#speed = this.#checkedSpeed(event.style.rate);
        break;
    }
  }

  #pushFixed(part: SpeechPart, span: { start: number; end: number }, out: Segment[]): void {
    this.#fixed.push({ ...part, at: span.start, to: span.end });
    out.push(...this.#sentences(this.#feed(PLACEHOLDER, span.start)));
  }

  #sentences(sentences: readonly string[]): Segment[] {
    const matcher = this.#settings.pronunciations?.(this.#voice.lang);
    const out: Segment[] = [];
    for (const sentence of sentences) {
      // The chunker returns its text in order, trimmed: the next occurrence is this sentence.
      const found = this.#fed.indexOf(sentence);
      const pos = this.#fedAt + Math.max(0, found);
      const parts: SpeechPart[] = [];
      const plain = (from: number, to: number) =>
        parts.push(...textParts(sentence.slice(from, to), matcher, this.#sourceAt(pos + from)));
      let from = 0;
      for (let i = sentence.indexOf(PLACEHOLDER); i !== -1; i = sentence.indexOf(PLACEHOLDER, from)) {
        if (i > from) plain(from, i);
        parts.push(this.#fixed.shift()!);
        from = i + 1;
      }
      if (from < sentence.length) plain(from, sentence.length);
      if (found >= 0) this.#consume(found + sentence.length);
      if (this.#withinChars(parts))
        out.push({ kind: 'speech', parts, voice: this.#voice, speed: this.#speed });
    }
    return out;
  }

  /**
   * Counts a sentence's reading against the bound: a whole text may speak `bounds.chars`, a
   * streamed one may have its readings add that many to what was written. False (and the error
   * kept for the next read) when the sentence would pass it.
   */
  #withinChars(parts: readonly SpeechPart[]): boolean {
    const bounds = this.#settings.bounds;
    if (bounds === undefined) return true;
    const spoken = spokenChars(parts);
    const added = spoken - codePointLength(displayText(parts));
    if (bounds.streamed ? this.#added + added <= bounds.chars : this.#spoken + spoken <= bounds.chars) {
      this.#spoken += spoken;
      this.#added += added;
      return true;
    }
    this.#dropped ??= bounds.streamed
      ? ttsError(
          'TTS_ERR_TEXT_TOO_LONG',
          `With this sentence the pronunciations and aliases of this utterance would add ${this.#added + added} characters to what it was sent, over the limit of ${bounds.chars}; the sentence was not spoken`,
          { data: { param: 'text' } },
        )
      : textTooLongOnceRead(this.#spoken + spoken, bounds.chars);
    return false;
  }

  /** Counts a pause against the bound on all pauses; throws (the pause is skipped) past it. */
  #checkPause(ms: number): void {
    const bounds = this.#settings.bounds;
    if (bounds !== undefined && this.#pausedMs + ms > bounds.pauseMs) {
      throw ttsError(
        'TTS_ERR_AUDIO_TOO_LONG',
        `The pauses would make ${(this.#pausedMs + ms) / 1000} s of silence, over the ${bounds.pauseMs / 1000} s of audio one request may make; this pause was skipped`,
        { data: { param: 'text' } },
      );
    }
    this.#pausedMs += ms;
  }

  /** The first `n` characters of `#fed` have been returned: forget them and the runs before them. */
  #consume(n: number): void {
    this.#fed = this.#fed.slice(n);
    this.#fedAt += n;
    let keep = 0;
    while (keep + 1 < this.#runs.length && this.#runs[keep + 1]!.pos <= this.#fedAt) keep++;
    if (keep > 0) this.#runs = this.#runs.slice(keep);
  }

  #checkedPhonemes(event: Extract<MarkupEvent, { type: 'phonemes' }>): string {
    const phonemes =
      event.alphabet === 'ipa' ? ipaToKokoro(event.phonemes, this.#voice.lang) : event.phonemes;
    const foreign = foreignPhonemeSymbols(phonemes);
    if (foreign.length > 0) {
      throw ttsError(
        'TTS_ERR_INVALID_MARKUP',
        `The phonemes ${JSON.stringify(event.phonemes)} for ${JSON.stringify(event.text)} (at character ${event.start}) have symbols outside Kokoro's vocabulary: ${foreign.join(', ')}`,
      );
    }
    return phonemes;
  }

  #checkedSpeed(rate: number): number {
    const speed = this.#settings.speed * rate;
    if (!(speed >= SPEED_MIN && speed <= SPEED_MAX)) {
      throw ttsError(
        'TTS_ERR_INVALID_MARKUP',
        `A rate of ${rate} on the request's speed ${this.#settings.speed} makes ${Math.round(speed * 1000) / 1000}; the speed must stay from ${SPEED_MIN} to ${SPEED_MAX}`,
      );
    }
    return speed;
  }

  #warn(message: string): void {
    if (!this.#warnings.includes(message)) this.#warnings.push(message);
  }
}

/** A whole text that would speak `spoken` characters once read, over the bound of `max`. */
export function textTooLongOnceRead(spoken: number, max: number): Error {
  return ttsError(
    'TTS_ERR_TEXT_TOO_LONG',
    `The text would speak ${spoken} characters once its pronunciations and aliases are applied, over the limit of ${max}; send less text or shorter readings`,
    { data: { param: 'text' } },
  );
}

/** The segments of a whole text (push and end). */
export function scriptOf(
  text: string,
  settings: ScriptSettings,
): { segments: Segment[]; warnings: readonly string[] } {
  const segmenter = new Segmenter(settings);
  const segments = [...segmenter.push(text), ...segmenter.end()];
  return { segments, warnings: segmenter.warnings };
}
