/**
 * Voices: the catalog of available voice files, parsing of voice specs (`af_bella`,
 * `af_bella+af_sky`, `af_bella(2)+af_sky(1)`), loading, blending and the style row.
 *
 * Paths are only ever built from ids that are in Kokoro's published list (constants.ts), never from the
 * raw request string.
 */
import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  STYLE_DIM,
  VOICE_FILE_BYTES,
  VOICE_IDS,
  VOICE_ROWS,
  isVoiceId,
  type LanguageCode,
  type VoiceId,
} from './constants.ts';
import { ttsError, type TtsError } from '../../protocol/errors.ts';
import { MAX_VOICE_SPEC_CHARS, refuseControlChars } from '../../protocol/request.ts';

export const MAX_BLEND_VOICES = 8;

export interface VoicePart {
  readonly id: VoiceId;
  /** Normalized: the weights of a blend add up to 1. */
  readonly weight: number;
}

/** A voice spec that cannot be parsed: the client is told why. */
const badSpec = (message: string) =>
  ttsError('TTS_ERR_INVALID_OPTION', message, { data: { param: 'voice' } });
/** A language the server cannot read the text in, named by the voice or by `lang` (`param`). */
const unsupported = (param: 'voice' | 'lang', message: string) =>
  ttsError('TTS_ERR_LANGUAGE_UNSUPPORTED', message, { data: { param } });

// Weights are plain decimals (no "0x10", "1e3").
const WEIGHT = /^\s*(?:\d+(?:\.\d*)?|\.\d+)\s*$/;

/** One item of a blend: `name` or `name(weight)`; anything else is taken whole as a (wrong) name. */
function splitItem(item: string): { id: string; weight?: string } {
  const open = item.indexOf('(');
  const close = item.indexOf(')');
  if (open < 0) return { id: item };
  if (close !== item.length - 1 || item.indexOf('(', open + 1) >= 0) return { id: item };
  return { id: item.slice(0, open).trimEnd(), weight: item.slice(open + 1, close) };
}

/**
 * Parses a voice spec into normalized parts. Pure: it checks syntax, ids against the published
 * list and weights, but not whether the files are present (see VoiceCatalog.resolve). Bounded and
 * linear: a spec longer than MAX_VOICE_SPEC_CHARS is refused before it is looked at, and one that
 * holds a control character (CR, LF, TAB…) before trimming could forgive it.
 */
export function parseVoiceSpec(spec: string): VoicePart[] {
  if (spec.length > MAX_VOICE_SPEC_CHARS) {
    throw badSpec(
      `voice is ${spec.length} characters long; a voice id or a blend of up to ${MAX_BLEND_VOICES} voices takes at most ${MAX_VOICE_SPEC_CHARS}`,
    );
  }
  refuseControlChars(spec, 'voice');
  const raw = spec.trim();
  if (raw === '') throw badSpec('voice must not be empty');
  const items = raw.split('+').map((s) => s.trim());
  if (items.length > MAX_BLEND_VOICES) {
    throw badSpec(`A blend may mix at most ${MAX_BLEND_VOICES} voices; got ${items.length}`);
  }
  const weights = new Map<VoiceId, number>();
  for (const item of items) {
    const { id, weight: weightText } = splitItem(item);
    if (!isVoiceId(id)) throw unknownVoice(id);
    let weight = 1;
    if (weightText !== undefined) {
      weight = WEIGHT.test(weightText) ? Number(weightText) : NaN;
      if (!Number.isFinite(weight) || weight <= 0) {
        throw badSpec(
          `Weight ${JSON.stringify(weightText.slice(0, 40))} of voice ${id} should be a positive finite number, as in af_bella(2)+af_sky(1)`,
        );
      }
    }
    weights.set(id, (weights.get(id) ?? 0) + weight);
  }
  const total = [...weights.values()].reduce((a, b) => a + b, 0);
  return [...weights].map(([id, w]) => ({ id, weight: w / total }));
}

function unknownVoice(id: string): TtsError {
  return ttsError(
    'TTS_ERR_VOICE_NOT_FOUND',
    `Unknown voice ${JSON.stringify(id.slice(0, 40))}. Voice ids are case-sensitive; should be one of: ${VOICE_IDS.join(', ')}; or a blend such as af_bella+af_sky or af_bella(2)+af_sky(1)`,
    { data: { param: 'voice' } },
  );
}

/** The language of a voice id: its first letter. */
export function voiceLanguage(id: VoiceId): LanguageCode {
  return id[0] as LanguageCode;
}

export interface VoiceFacts {
  readonly id: VoiceId;
  readonly name: string;
  /** BCP 47 tag. */
  readonly language: string;
  readonly languageName: string;
  readonly gender: 'female' | 'male';
  /** Whether this server can phonemize the voice's language. */
  readonly supported: boolean;
}

export interface ResolvedVoice {
  /** Canonical spec, e.g. `af_bella(0.667)+af_sky(0.333)`: the cache key for the blended table. */
  readonly key: string;
  readonly lang: LanguageCode;
  readonly parts: readonly (VoicePart & { file: string })[];
}

/** The directory of voice files that ships inside the kokoro-js package (all 54 v1.0 voices). */
export function kokoroJsVoiceDir(): string | undefined {
  try {
    const entry = createRequire(import.meta.url).resolve('kokoro-js');
    const dir = join(dirname(entry), '..', 'voices');
    return existsSync(dir) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What the catalog says of languages: the text front end's registry (text/languages/), handed in
 * by whoever builds the catalog, since this folder knows Kokoro's letters but not their names.
 */
export interface VoiceLanguages {
  /** The languages this server can phonemize, in Kokoro's order. */
  readonly served: readonly LanguageCode[];
  /** `American English`. */
  readonly name: (lang: LanguageCode) => string;
  /** BCP 47: `en-US`. */
  readonly tag: (lang: LanguageCode) => string;
  /** A request's `lang` (letter, tag or alias, any case) → its letter, or undefined. */
  readonly parse: (name: string) => LanguageCode | undefined;
}

/**
 * Which voices exist on this machine, and where. The model directory's `voices/` comes first, then
 * the voices that kokoro-js ships, so every v1.0 voice is available offline.
 */
export class VoiceCatalog {
  readonly #files: ReadonlyMap<VoiceId, string>;
  readonly #languages: VoiceLanguages;

  constructor(dirs: readonly string[], languages: VoiceLanguages) {
    const files = new Map<VoiceId, string>();
    for (const id of VOICE_IDS) {
      for (const dir of dirs) {
        const file = join(dir, `${id}.bin`);
        if (existsSync(file) && statSync(file).size === VOICE_FILE_BYTES) {
          files.set(id, file);
          break;
        }
      }
    }
    this.#files = files;
    this.#languages = languages;
  }

  #supported(lang: LanguageCode): boolean {
    return this.#languages.served.includes(lang);
  }

  /** Ids with a file present, in the published order. */
  get ids(): VoiceId[] {
    return [...this.#files.keys()];
  }

  has(id: string): boolean {
    return isVoiceId(id) && this.#files.has(id);
  }

  /** What a listing says of a voice: all of it read off the id (`af_heart`: American English, female, Heart). */
  describe(id: VoiceId): VoiceFacts {
    const lang = voiceLanguage(id);
    const name = id.slice(3);
    return {
      id,
      name: name[0]!.toUpperCase() + name.slice(1),
      language: this.#languages.tag(lang),
      languageName: this.#languages.name(lang),
      gender: id[1] === 'f' ? 'female' : 'male',
      supported: this.#supported(lang),
    };
  }

  /** The languages this server can phonemize, by Kokoro's letter. */
  get languages(): LanguageCode[] {
    return [...this.#languages.served];
  }

  /**
   * Parses and resolves a spec; every voice must be present and share one language. The text is
   * read in that language, or in `langName` when given (Kokoro's letter, `es`, `fr-fr`, `pt-BR`…:
   * see parseLanguage), which must be one this server can phonemize.
   */
  resolve(spec: string, langName?: string): ResolvedVoice {
    const parts = parseVoiceSpec(spec);
    for (const part of parts) if (!this.#files.has(part.id)) throw unknownVoice(part.id);
    const voiceLang = voiceLanguage(parts[0]!.id);
    const { name, tag } = this.#languages;
    const mixed = parts.find((p) => voiceLanguage(p.id) !== voiceLang);
    if (mixed) {
      throw unsupported(
        'voice',
        `A blend must use voices of one language; ${parts[0]!.id} is ${name(voiceLang)} but ${mixed.id} is ${name(voiceLanguage(mixed.id))}`,
      );
    }
    const supported = () =>
      this.languages.map((l) => `${name(l)} (${l}f_*/${l}m_* voices, lang "${l}" or "${tag(l)}")`).join(', ');
    let lang = voiceLang;
    if (langName !== undefined) {
      const named = this.#languages.parse(langName);
      if (named === undefined) {
        throw unsupported(
          'lang',
          `Unknown lang ${JSON.stringify(langName.slice(0, 40))}; supported languages: ${supported()}`,
        );
      }
      if (!this.#supported(named)) {
        throw unsupported(
          'lang',
          `lang ${JSON.stringify(langName)} is ${name(named)}, which this server cannot phonemize; supported languages: ${supported()}`,
        );
      }
      lang = named;
    } else if (!this.#supported(lang)) {
      throw unsupported(
        'voice',
        `Voice ${parts[0]!.id} speaks ${name(lang)}, which this server cannot phonemize; supported languages: ${supported()}`,
      );
    }
    const key = parts.map((p) => `${p.id}(${Number(p.weight.toFixed(6))})`).join('+');
    return { key, lang, parts: parts.map((p) => ({ ...p, file: this.#files.get(p.id)! })) };
  }
}

/** Reads one voice file: 510 x 256 little-endian float32. */
export async function loadVoiceFile(file: string): Promise<Float32Array> {
  const bytes = await readFile(file);
  return voiceTableFromBytes(bytes, file);
}

export function voiceTableFromBytes(bytes: Uint8Array, name: string): Float32Array {
  if (bytes.byteLength !== VOICE_FILE_BYTES) {
    throw new Error(`Voice file ${name} has ${bytes.byteLength} bytes; expected ${VOICE_FILE_BYTES}`);
  }
  // Copy into an aligned buffer; Buffer pools may hand out unaligned offsets.
  const table = new Float32Array(VOICE_ROWS * STYLE_DIM);
  new Uint8Array(table.buffer).set(bytes);
  return table;
}

/** Weighted sum of voice tables (weights already normalized). */
export function blendVoiceTables(tables: readonly { table: Float32Array; weight: number }[]): Float32Array {
  if (tables.length === 1 && tables[0]!.weight === 1) return tables[0]!.table;
  const out = new Float32Array(VOICE_ROWS * STYLE_DIM);
  for (const { table, weight } of tables) for (let i = 0; i < out.length; i++) out[i]! += table[i]! * weight;
  return out;
}

/**
 * The style vector for an input of `phonemeCount` ids (pads not counted): row
 * `min(max(n - 1, 0), 509)`, as the reference pipeline takes it (hexgrad/kokoro `KPipeline`:
 * `pack[len(ps)-1]`). kokoro-js takes row n, the style of an input one symbol longer.
 */
export function styleRow(table: Float32Array, phonemeCount: number): Float32Array {
  const row = Math.min(Math.max(phonemeCount - 1, 0), VOICE_ROWS - 1);
  return table.subarray(row * STYLE_DIM, (row + 1) * STYLE_DIM);
}

/** Loads and blends voices on demand, caching the tables (single voices and blends). */
export class VoiceStore {
  readonly #cache = new Map<string, Promise<Float32Array>>();
  readonly #maxBlends: number;

  constructor(maxBlends = 32) {
    this.#maxBlends = maxBlends;
  }

  get(voice: ResolvedVoice): Promise<Float32Array> {
    const hit = this.#cache.get(voice.key);
    if (hit) return hit;
    const promise = Promise.all(
      voice.parts.map(async (p) => ({ table: await this.#single(p.id, p.file), weight: p.weight })),
    ).then(blendVoiceTables);
    this.#remember(voice.key, promise);
    return promise;
  }

  #single(id: VoiceId, file: string): Promise<Float32Array> {
    const key = `${id}(1)`;
    let hit = this.#cache.get(key);
    if (!hit) {
      hit = loadVoiceFile(file);
      this.#remember(key, hit);
    }
    return hit;
  }

  #remember(key: string, value: Promise<Float32Array>): void {
    value.catch(() => this.#cache.delete(key));
    this.#cache.set(key, value);
    // Evict the oldest blends first; single voices are few (54 at most) and stay.
    if (this.#cache.size > VOICE_IDS.length + this.#maxBlends) {
      for (const k of this.#cache.keys()) {
        if (k.includes('+')) {
          this.#cache.delete(k);
          break;
        }
      }
    }
  }
}
