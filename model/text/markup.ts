/**
 * Markup in the text a client sends, read into events as the text arrives: a subset of SSML, and
 * the bracket syntax of Kokoro-FastAPI (`[pause:1.5s]`, `[voice:af_bella]`) and of misaki
 * (`[word](/phonemes/)`, `[word](+1)`), read in plain text and inside SSML text alike.
 * `MarkupParser.push()` holds back only what may still start a construct (`[`; in SSML also `<`
 * and `&`). Whole, one character at a time or cut anywhere, a text gives the same events once
 * adjacent text events are merged ({@link mergeText}). Linear time on any input: every construct
 * is bounded (`maxTagChars`), a held construct's scan resumes where it stopped, and no regular
 * expression runs over unbounded text.
 *
 * Lenient where SSML is strict: a `<` or `&` that starts no tag or entity is text (with a
 * warning); text outside the root (after `</speak>`) is spoken; names are read in lower case.
 * Strict where it is not: an element still open at the end is an error. Pure: no I/O, no Node API.
 */
import { ALPHABETS, STRENGTHS, clip, durationMs, fail, oneOf, rateOf, voiceSpec } from './markup-values.ts';

/** `auto`: SSML when the text opens with `<speak` (or `<?xml`), else plain text with brackets. */
export type MarkupMode = 'auto' | 'ssml' | 'none';

/** Bounds that keep what a hostile text costs close to what plain text costs. */
export interface MarkupLimits {
  /** A pause over this is an error, never clamped. */
  readonly maxPauseMs: number;
  /** How deep SSML elements may nest. */
  readonly maxDepth: number;
  /** The longest tag `<…>` (a comment, CDATA section) or bracket construct `[…](…)`. */
  readonly maxTagChars: number;
  /** The most text held back while a construct is incomplete (the content of `<sub>`, say). */
  readonly maxHeldChars: number;
}

export const DEFAULT_MARKUP_LIMITS: MarkupLimits = Object.freeze({
  maxPauseMs: 10_000,
  maxDepth: 32,
  maxTagChars: 2048,
  maxHeldChars: 4096,
});

/** The voice and rate in effect: `voice` undefined is the request's; `rate` multiplies its speed. */
export interface StyleState {
  readonly voice: string | undefined;
  readonly rate: number;
}

/** Where an event's construct is: UTF-16 offsets of its source span in the whole text fed so far. */
export type Span = { start: number; end: number };

/** What the text says, in order. */
export type MarkupEvent =
  | ({ type: 'text'; text: string } & Span)
  | ({ type: 'phonemes'; phonemes: string; alphabet: 'ipa' | 'kokoro'; text: string } & Span)
  | ({ type: 'alias'; spoken: string; text: string } & Span) // <sub alias="…">text</sub>
  | ({ type: 'say-as'; interpretAs: string; format?: string; detail?: string; text: string } & Span)
  | ({ type: 'stress'; stress: string; text: string } & Span) // misaki's [word](+1)
  | ({ type: 'pause'; ms: number } & Span)
  | ({ type: 'mark'; name: string } & Span)
  | { type: 'style'; style: StyleState } // the voice or rate in effect changed
  | { type: 'boundary' }; // a sentence ends here: <p>, </p>, <s>, </s>

type WithText = Extract<MarkupEvent, { text: string }>;
type Frame = { readonly name: string; readonly at: number; style: StyleState };
/** An element whose content becomes the `text` of one event (`phoneme`, `sub`, `say-as`). */
type Capture = { depth: number; name: string; event: WithText; parts: string[]; chars: number };
type Tag = { readonly name: string; readonly attrs: Map<string, string>; readonly selfClosing: boolean };

const WAIT = -1;
const MAX_ENTITY_CHARS = 32;
/** Distinct warnings kept: a hostile text could name a new unknown element in every tag. */
const MAX_WARNINGS = 20;
const ENTITIES = new Map(Object.entries({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }));
/** What opens an SSML document in `auto` mode, and what may follow it. */
const SSML_OPENINGS = Object.entries({ '<speak': ' \t\r\n/>', '<?xml': ' \t\r\n?' });
/** What opens each kind of `<…>` (told apart by its first three characters) and what ends it. */
const TAG_KINDS = Object.entries({ '<!--': '-->', '<![CDATA[': ']]>', '<!': '>', '<?': '?>', '<': '>' });
const BARE_LT = 'a "<" that starts no tag is read as text (write &lt;)';
const BARE_AMP = 'a "&" that starts no entity is read as text (write &amp;)';
// Each runs over one bounded construct only, and none backtracks more than linearly.
const STRESS = /^[+-]?(?:\d+(?:\.\d+)?|\.\d+)$/;
/** One attribute of a start tag, from the space before it to its quoted value (sticky). */
const ATTR = /\s+([^\s=/>"']+)\s*=\s*(?:"([^"]*)"|'([^']*)')/y;
const CLOSING = /^<\/([^\s>]+)\s*>$/;

const isSpace = (ch: string | undefined): boolean => ch !== undefined && ' \t\n\r\uFEFF'.includes(ch);
const isDigit = (ch: string | undefined): boolean => ch !== undefined && ch >= '0' && ch <= '9';
const isNameStart = (ch: string | undefined): boolean => /^[A-Za-z_:\u0080-\uffff]$/.test(ch ?? '');
const isNameChar = (ch: string | undefined): boolean => /^[\w:.\-\u0080-\uffff]$/.test(ch ?? '');
/** What ends the word of `[word]`: it holds no brackets, and in SSML no tags or entities. */
const isBracketStop = (ch: string, ssml: boolean): boolean =>
  ch === '[' || ch === ']' || (ssml && (ch === '<' || ch === '&'));
const flattened = (capture?: Capture): string => `markup inside <${capture?.name}> is read as its text`;
const unknownEntity = (entity: string): string => `unknown entity ${entity} kept as written`;

/** Merges each run of adjacent `text` events into one spanning them all. */
export function mergeText(events: readonly MarkupEvent[]): MarkupEvent[] {
  const out: MarkupEvent[] = [];
  for (const event of events) append(out, event, false);
  return out;
}

/**
 * Adds `e` to `out`, merged with the text before it; as the parser emits them (`verbatim`), only
 * text written as it is and touching in the source, so a text event's offsets map one to one.
 */
function append(out: MarkupEvent[], e: MarkupEvent, verbatim: boolean): void {
  const last = out.at(-1);
  const asWritten = (t: Extract<MarkupEvent, { type: 'text' }>) => t.end - t.start === t.text.length;
  if (e.type !== 'text' || last?.type !== 'text') out.push(e);
  else if (verbatim && (last.end !== e.start || !asWritten(last) || !asWritten(e))) out.push(e);
  else out[out.length - 1] = { type: 'text', text: last.text + e.text, start: last.start, end: e.end };
}

/**
 * Reads markup incrementally: {@link push} text as it arrives, then call {@link end} once. A
 * `TtsError` (`invalid_markup`) thrown by either ends the parse.
 */
export class MarkupParser {
  readonly #limits: MarkupLimits;
  /** No construct is held longer, so held text stays within maxHeldChars. */
  readonly #tagMax: number;
  /** `auto` until the first characters decide it, then `plain` or `ssml`. */
  #mode: MarkupMode | 'plain';
  /** From #pos on, #buf is not consumed yet; #buf[0] is character #base of the whole text. */
  #buf = '';
  #base = 0;
  #pos = 0;
  #final = false;
  /** Of the construct held at #pos, as offsets from it: where its scan resumes, its `]`; its open quote. */
  #scan = 0;
  #close = 0;
  #quote = '';
  readonly #stack: Frame[] = [];
  #root: StyleState = { voice: undefined, rate: 1 };
  #capture: Capture | undefined;
  #out: MarkupEvent[] = [];
  #recovered: MarkupEvent[] = [];
  readonly #warnings = new Set<string>();

  /** @throws RangeError for a limit below 0. */
  constructor(mode: MarkupMode = 'auto', limits: Partial<MarkupLimits> = {}) {
    const merged = { ...DEFAULT_MARKUP_LIMITS, ...limits };
    if (!(Math.min(...Object.values(merged)) >= 0)) throw new RangeError('markup limits must be numbers ≥ 0');
    this.#limits = merged;
    this.#tagMax = Math.min(merged.maxTagChars, merged.maxHeldChars);
    this.#mode = mode;
  }

  /** Feeds the next piece of text; returns the events that are complete. Throws TtsError (invalid_markup) on bad markup. */
  push(piece: string): MarkupEvent[] {
    if (this.#final) throw new Error('MarkupParser: push() after end()');
    if (this.#mode === 'none') {
      const start = this.#base;
      this.#base += piece.length;
      return piece === '' ? [] : [{ type: 'text', text: piece, start, end: this.#base }];
    }
    // The buffer keeps only the construct held and the new piece.
    this.#buf = this.#buf.slice(this.#pos) + piece;
    this.#base += this.#pos;
    this.#pos = 0;
    return this.#run();
  }

  /** No more text: returns the rest; an unterminated construct is an error (TtsError invalid_markup). */
  end(): MarkupEvent[] {
    if (this.#final) return [];
    this.#final = true;
    const out = this.#mode === 'none' ? [] : this.#run();
    const open = this.#stack.at(-1);
    if (open === undefined) return out;
    this.#recovered = out;
    throw fail(`SSML element <${open.name}> is not closed`, open.at);
  }

  /** Warnings so far, each naming what was dropped or not applied. Deduplicated. */
  get warnings(): readonly string[] {
    return [...this.#warnings];
  }

  /** Characters held back waiting for a construct to complete. */
  get heldChars(): number {
    return this.#buf.length - this.#pos + (this.#capture?.chars ?? 0);
  }

  /** Whether the text is being read as SSML (known once the first non-space characters are seen). */
  get ssml(): boolean {
    return this.#mode === 'ssml';
  }

  /**
   * Reads what the buffer holds. A construct that cannot be spoken is skipped (up to its `]`, `>`
   * or `;`, or all that is held) and the rest read on; the first such error is thrown after, with
   * the events read kept for {@link takeRecovered}, so streamed text goes on after a bad construct.
   */
  #run(): MarkupEvent[] {
    let failure: unknown;
    while (this.#pos < this.#buf.length) {
      let next: number;
      try {
        next = this.#step(this.#pos);
      } catch (err) {
        failure ??= err;
        next = this.#skip(this.#pos);
      }
      if (next === WAIT) break;
      this.#pos = next;
      this.#scan = this.#close = 0;
      this.#quote = '';
    }
    const out = this.#out;
    this.#out = [];
    if (failure === undefined) return out;
    this.#recovered = out;
    throw failure;
  }

  /** Where reading goes on after a bad construct at `i`. */
  #skip(i: number): number {
    const b = this.#buf;
    const end = ({ '[': ']', '<': '>', '&': ';' } as Record<string, string>)[b[i]!];
    const j = end === undefined ? i : b.indexOf(end, i + 1);
    // Only as far as what a streamed text would hold when the error showed: a link's target after
    // `]` is read again as text.
    return j === -1 ? b.length : j + 1;
  }

  /** The events a push or end read before it threw (the construct it names was skipped). */
  takeRecovered(): MarkupEvent[] {
    const out = this.#recovered;
    this.#recovered = [];
    return out;
  }

  /** A run of text up to the next character that may start a construct, or that construct. */
  #step(i: number): number {
    const b = this.#buf;
    const ssml = this.#mode === 'ssml';
    let j = i;
    if (this.#mode === 'auto') {
      // Leading whitespace is text in either mode; what follows decides the mode, once.
      while (j < b.length && isSpace(b[j])) j++;
      if (j > i) return this.#text(i, j);
      this.#mode = sniffMode(b, i, this.#final) ?? 'auto';
      return this.#mode === 'auto' ? WAIT : i;
    }
    while (j < b.length && b[j] !== '[' && !(ssml && (b[j] === '<' || b[j] === '&'))) j++;
    if (j > i) return this.#text(i, j);
    return b[i] === '[' ? this.#bracket(i) : b[i] === '<' ? this.#tag(i) : this.#entity(i);
  }

  #text(i: number, j: number, text = this.#buf.slice(i, j), warning?: string): number {
    if (warning) this.#warn(warning);
    if (text !== '') this.#emit({ type: 'text', text, start: this.#base + i, end: this.#base + j });
    return j;
  }

  /** Waits for more text, the scan of the construct at `i` to resume at `j`. */
  #wait(i: number, j: number, close = 0): number {
    this.#scan = j - i;
    this.#close = close && close - i;
    return WAIT;
  }

  /** At `[`: a pause, a voice, misaki's phonemes or stress, or text. */
  #bracket(i: number): number {
    const b = this.#buf;
    const ssml = this.#mode === 'ssml';
    const cap = i + this.#tagMax;
    const stop = Math.min(b.length, cap);
    const held = !this.#final;
    const at = this.#base + i;
    let close = this.#close && i + this.#close;
    if (close === 0) {
      // 1. Up to `]`; a `[` (or a tag or entity) before it makes this `[` text.
      let j = Math.max(i + 1, i + this.#scan);
      while (j < stop && !isBracketStop(b[j]!, ssml)) j++;
      if (j < stop && b[j] === ']') close = j;
      else if (j === b.length && j < cap && held) return this.#wait(i, j);
      else {
        const kw = keywordAt(b, i, j, false);
        if (kw === undefined) return this.#text(i, j);
        const why = j === cap ? `within ${cap - i} characters` : 'by "]"';
        throw fail(`[${kw.keyword}:…] is not closed ${why}`, at);
      }
    }
    // 2. `[pause:…]`, `[voice:…]`; else a word, markup only when `(/…/)` or `(+1)` follows.
    const kw = keywordAt(b, i, close, true);
    const body = b.slice(kw ? kw.colon + 1 : i, close);
    if (kw?.keyword === 'pause') {
      const ms = durationMs('pause', body, this.#limits.maxPauseMs, at);
      this.#emit({ type: 'pause', ms, start: at, end: this.#base + close + 1 });
    } else if (kw?.keyword === 'voice') {
      const voice = kw.colon < 0 ? undefined : voiceSpec('[voice:…]', body, at);
      if (this.#capture) this.#warn(flattened(this.#capture));
      else this.#setVoice(voice);
    }
    if (kw) return close + 1;
    const open = close + 1;
    if (close === i + 1 || (open < b.length && b[open] !== '(')) return this.#text(i, open);
    const first = b[open + 1];
    if (first === undefined) return held ? this.#wait(i, open, close) : this.#text(i, b.length);
    const phonemes = first === '/';
    if (!phonemes && first !== '+' && first !== '-' && !isDigit(first)) return this.#text(i, open + 1);
    // 3. The target, up to `)`: phonemes hold no brackets, a stress nothing but a signed number.
    let j = Math.max(open + 2, i + this.#scan);
    const inTarget = (ch: string): boolean =>
      phonemes ? ch !== '(' && !isBracketStop(ch, ssml) : isDigit(ch) || '+-.'.includes(ch);
    while (j < stop && b[j] !== ')' && inTarget(b[j]!)) j++;
    if (j === b.length && j < cap && held) return this.#wait(i, j, close);
    const target = j < stop && b[j] === ')' ? b.slice(open + 1, j) : '';
    const span = { text: b.slice(i + 1, close), start: at, end: this.#base + j + 1 };
    if (phonemes && target.length > 1 && target.endsWith('/')) {
      let e = target.length;
      while (e > 1 && target[e - 1] === '/') e--; // as misaki: every trailing slash goes
      const ph = target.slice(1, e).trim();
      if (ph === '') throw fail(`empty phonemes in [${clip(span.text)}](${target})`, at);
      this.#emit({ type: 'phonemes', phonemes: ph, alphabet: 'kokoro', ...span });
    } else if (!phonemes && STRESS.test(target)) this.#emit({ type: 'stress', stress: target, ...span });
    else return this.#text(i, open + 1); // another link target: text as written
    return j + 1;
  }

  /**
   * In SSML at `<`: a tag, a comment or a declaration or prolog (dropped), CDATA (text), or a bare
   * `<`. Each is held whole, up to its end outside quotes (and a DOCTYPE's `[…]`).
   */
  #tag(i: number): number {
    const b = this.#buf;
    const at = this.#base + i;
    const c = b[i + 1];
    if (c === undefined) return this.#final ? this.#text(i, i + 1, '<', BARE_LT) : WAIT;
    if (c !== '!' && c !== '?' && c !== '/' && !isNameStart(c)) return this.#text(i, i + 1, '<', BARE_LT);
    const [opening, end] = TAG_KINDS.find(([o]) => b.startsWith(o.slice(0, 3), i))!;
    const quoted = end === '>';
    const cap = i + this.#tagMax;
    const stop = Math.min(b.length, cap);
    let q = this.#quote;
    let g = Math.min(Math.max(i + opening.length, i + this.#scan), stop);
    for (; g < stop; g++) {
      const ch = b[g];
      if (q !== '') q = ch === q ? '' : q;
      else if (ch === '>' && b.endsWith(end, g + 1) && g + 1 - end.length >= i + opening.length) break;
      else if (quoted && (ch === '"' || ch === "'")) q = ch;
      else if (quoted && ch === '[' && opening === '<!') q = ']';
    }
    if (g === b.length && g < cap && !this.#final) {
      this.#quote = q;
      return this.#wait(i, g);
    }
    const src = b.slice(i, g + 1);
    if (g === stop) {
      const why = g === cap ? `is longer than ${cap - i} characters` : 'is not closed';
      throw fail(`SSML ${opening === '<!--' ? 'comment' : 'tag'} ${clip(src)} ${why}`, at);
    }
    const closing = c === '/' ? CLOSING.exec(src) : undefined;
    if (!src.startsWith(opening) || closing === null) throw fail(`malformed SSML tag ${clip(src)}`, at);
    if (opening === '<![CDATA[') this.#text(i + opening.length, g - 2);
    else if (closing) this.#closeElement(closing[1]!.toLowerCase(), at, g + 1);
    else if (opening === '<') this.#open(readTag(src, at, this.#warn), at, g + 1);
    return g + 1;
  }

  /** In SSML at `&`: an entity, decoded; an unknown one as written; a bare `&` as text. */
  #entity(i: number): number {
    const entity = entityAt(this.#buf, i, this.#final, this.#base + i);
    if (entity === null) return WAIT;
    if (entity === undefined) return this.#text(i, i + 1, '&', BARE_AMP);
    return this.#text(i, entity.end, entity.text, entity.known ? undefined : unknownEntity(entity.text));
  }

  #open(tag: Tag, at: number, next: number): void {
    const { name, attrs } = tag;
    const span = { start: at, end: this.#base + next };
    const { maxDepth, maxPauseMs: max } = this.#limits;
    if (this.#stack.length >= maxDepth) throw fail(`SSML elements nest deeper than ${maxDepth} levels`, at);
    if (this.#capture) this.#warn(flattened(this.#capture));
    const before = this.#style;
    let style = before;
    let event: WithText | undefined;
    if (name === 'p' || name === 's') this.#emit({ type: 'boundary' });
    else if (name === 'mark') this.#emit({ type: 'mark', name: required(tag, 'name', at), ...span });
    else if (name === 'break') {
      const [time, strength = 'medium'] = [attrs.get('time'), attrs.get('strength')];
      const ms = time
        ? durationMs('break time', time, max, at)
        : oneOf('break strength', strength, STRENGTHS, at);
      if (ms > max) throw fail(`break strength "${strength}" is over the maximum of ${max / 1000} s`, at);
      this.#emit({ type: 'pause', ms, ...span });
    } else if (name === 'phoneme') {
      const alphabet = oneOf('phoneme alphabet', attrs.get('alphabet') ?? 'ipa', ALPHABETS, at);
      event = { type: 'phonemes', phonemes: required(tag, 'ph', at), alphabet, text: '', ...span };
    } else if (name === 'sub')
      event = { type: 'alias', spoken: required(tag, 'alias', at), text: '', ...span };
    else if (name === 'say-as') {
      const interpretAs = required(tag, 'interpret-as', at);
      const optional = Object.fromEntries([...attrs].filter(([k]) => k === 'format' || k === 'detail'));
      event = { type: 'say-as', interpretAs, ...optional, text: '', ...span };
    } else if (name === 'prosody' || name === 'voice') {
      for (const [attr, value] of attrs) {
        if (attr !== (name === 'prosody' ? 'rate' : 'name'))
          this.#warn(`SSML <${name}> ${attr} is not applied`);
        else if (name === 'voice') style = { ...style, voice: voiceSpec('<voice> name', value, at) };
        else style = { ...style, rate: before.rate * rateOf(value, at) };
      }
    } else if (name === 'lang')
      this.#warn("SSML <lang> is not applied: its text is read in the request's language");
    else if (name !== 'speak' && name !== 'emphasis')
      this.#warn(`unknown SSML element <${name}> dropped; its text is spoken`);
    if (event !== undefined && this.#capture === undefined) {
      this.#capture = { depth: this.#stack.length, name, event, parts: [], chars: 0 };
    }
    this.#stack.push({ name, at, style });
    this.#restyle(before);
    if (tag.selfClosing) this.#closeElement(name, at, next);
  }

  #closeElement(name: string, at: number, next: number): void {
    const top = this.#stack.pop();
    if (top === undefined) throw fail(`closing tag </${name}> has no open element`, at);
    if (top.name !== name) {
      throw fail(`closing tag </${name}> does not match <${top.name}> opened at character ${top.at}`, at);
    }
    const capture = this.#capture;
    if (capture?.depth === this.#stack.length) {
      this.#capture = undefined;
      this.#emit({ ...capture.event, text: capture.parts.join(''), end: this.#base + next });
    }
    if (name === 'p' || name === 's') this.#emit({ type: 'boundary' });
    this.#restyle(top.style);
  }

  get #style(): StyleState {
    return this.#stack.at(-1)?.style ?? this.#root;
  }

  /** `[voice:…]` sets the voice of the current element level, until that element closes. */
  #setVoice(voice: string | undefined): void {
    const before = this.#style;
    const top = this.#stack.at(-1);
    if (top === undefined) this.#root = { voice, rate: before.rate };
    else top.style = { voice, rate: before.rate };
    this.#restyle(before);
  }

  #restyle(before: StyleState): void {
    const now = this.#style;
    if (now.voice !== before.voice || now.rate !== before.rate) this.#emit({ type: 'style', style: now });
  }

  /** Adds an event, merged into the text before it; inside a capturing element only its text counts. */
  #emit(event: MarkupEvent): void {
    const capture = this.#capture;
    if (capture === undefined) return append(this.#out, event, true);
    if ('text' in event) {
      capture.parts.push(event.text);
      capture.chars += event.text.length;
      const max = this.#limits.maxHeldChars;
      if (capture.chars > max)
        throw fail(`the content of <${capture.name}> is over ${max} characters`, capture.event.start);
    }
    // A style set inside is undone before the element closes: dropping it loses nothing.
    if (event.type !== 'text' && event.type !== 'style') this.#warn(flattened(this.#capture));
  }

  readonly #warn = (message: string): void => {
    if (this.#warnings.size < MAX_WARNINGS) this.#warnings.add(message);
  };
}

/** Whole text at once: push + end. */
export function parseMarkup(
  text: string,
  mode?: MarkupMode,
  limits?: Partial<MarkupLimits>,
): { events: MarkupEvent[]; warnings: string[]; ssml: boolean } {
  const parser = new MarkupParser(mode, limits);
  const events = mergeText([...parser.push(text), ...parser.end()]);
  return { events, warnings: [...parser.warnings], ssml: parser.ssml };
}

/**
 * Cheap check: could `text` hold markup this parser reads? False only when {@link parseMarkup}
 * would return nothing but text, so that plain text keeps its fast path.
 */
export function hasMarkup(text: string, mode: MarkupMode = 'auto'): boolean {
  if (mode === 'none') return false;
  if (mode === 'ssml') return /[[<&]/.test(text);
  return text.includes('[') || sniffMode(text, skip(text, 0, isSpace), true) === 'ssml';
}

/** Whether the text from `i` opens an SSML document; undefined while too little is seen to tell. */
function sniffMode(b: string, i: number, final: boolean): 'ssml' | 'plain' | undefined {
  let pending = false;
  for (const [opening, after] of SSML_OPENINGS) {
    const seen = b.slice(i, i + opening.length);
    if (!opening.startsWith(seen)) continue;
    const next = b[i + opening.length];
    if (next !== undefined ? after.includes(next) : final && seen === opening) return 'ssml';
    pending ||= next === undefined;
  }
  return pending && !final ? undefined : 'plain';
}

/** `[pause:` or `[voice:` (or `[voice]`) at `b[i]`, read up to `j`: where its colon is (-1: none). */
function keywordAt(b: string, i: number, j: number, closed: boolean) {
  const word = b.slice(i + 1, i + 6).toLowerCase();
  const keyword = word === 'pause' ? 'pause' : word === 'voice' ? 'voice' : undefined;
  if (keyword === undefined) return undefined;
  let k = i + 6;
  while (k < j && isSpace(b[k])) k++;
  if (k < j && b[k] === ':') return { keyword, colon: k };
  return k === j && closed && keyword === 'voice' ? { keyword, colon: -1 } : undefined;
}

function required(tag: Tag, attr: string, at: number): string {
  const value = tag.attrs.get(attr)?.trim();
  if (!value) throw fail(`SSML <${tag.name}> needs a non-empty ${attr} attribute`, at);
  return value;
}

/** The index of the first character from `k` on that fails `test`. */
function skip(s: string, k: number, test: (ch: string | undefined) => boolean): number {
  while (test(s[k])) k++;
  return k;
}

/** A start tag `<name attr="value" …>` or `<name … />`, whole, with its quotes balanced. */
function readTag(src: string, at: number, warn: (message: string) => void): Tag {
  const attrs = new Map<string, string>();
  let k = skip(src, 1, isNameChar);
  for (ATTR.lastIndex = k; ; k = ATTR.lastIndex) {
    const m = ATTR.exec(src);
    if (m === null) break;
    const attr = m[1]!.toLowerCase();
    if (attrs.has(attr)) throw fail(`SSML tag ${clip(src)} repeats attribute ${attr}`, at);
    attrs.set(attr, decodeAttr(m[2] ?? m[3]!, at, warn));
  }
  const rest = src.slice(k).trim();
  if (rest !== '>' && rest !== '/>') {
    throw fail(`malformed SSML tag ${clip(src)}: should be <name attribute="value" …>`, at);
  }
  return { name: src.slice(1, skip(src, 1, isNameChar)).toLowerCase(), attrs, selfClosing: rest === '/>' };
}

function decodeAttr(value: string, at: number, warn: (message: string) => void): string {
  let out = '';
  let k = 0;
  for (let a = value.indexOf('&'); a >= 0; a = value.indexOf('&', k)) {
    const entity = entityAt(value, a, true, at);
    if (!entity?.known) warn(entity ? unknownEntity(entity.text) : BARE_AMP);
    out += value.slice(k, a) + (entity?.text ?? '&');
    k = entity?.end ?? a + 1;
  }
  return out + value.slice(k);
}

/**
 * The entity at `s[i]` (an `&`): its text (an unknown name as written) and where it ends;
 * `undefined` for a bare `&`; `null` while `s` ends too soon to tell. A character reference that
 * names no character is an error.
 */
function entityAt(s: string, i: number, final: boolean, at: number) {
  const cap = i + MAX_ENTITY_CHARS;
  const stop = Math.min(s.length, cap);
  let j = i + 1;
  while (j < stop && (s[j] === '#' || /[A-Za-z0-9]/.test(s[j]!))) j++;
  if (j === s.length && j < cap && !final) return null;
  if (j === stop || s[j] !== ';' || j === i + 1) return undefined;
  const body = s.slice(i + 1, j);
  if (body[0] !== '#') {
    const named = ENTITIES.get(body);
    return { text: named ?? s.slice(i, j + 1), end: j + 1, known: named !== undefined };
  }
  const hex = body[1] === 'x' || body[1] === 'X';
  const digits = body.slice(hex ? 2 : 1);
  const cp = (hex ? /^[0-9a-f]+$/i : /^[0-9]+$/).test(digits) ? Number.parseInt(digits, hex ? 16 : 10) : NaN;
  if (!(cp > 0 && cp <= 0x10ffff) || (cp >= 0xd800 && cp <= 0xdfff)) {
    throw fail(`character reference &${body}; names no character`, at);
  }
  return { text: String.fromCodePoint(cp), end: j + 1, known: true };
}
