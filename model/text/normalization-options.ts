/**
 * The normalizer's switches, as Kokoro-FastAPI's speech route takes them in `normalization_options`
 * (`NormalizationOptions` in remsky/Kokoro-FastAPI `api/src/structures/schemas.py`; what each does
 * in `api/src/services/text_processing/normalizer.py`, `normalize_text`). Pure.
 */
import { describeValue, ttsError } from '../../protocol/errors.ts';

/**
 * What the normalizer does before the G2P (normalize.ts for English, normalize-intl.ts for the
 * others). Kokoro-FastAPI normalizes English only; here each switch works where its reader exists:
 *
 * | field | English (`a`, `b`) | es, fr, it, pt-br, hi (`e f i p h`), ja (`j`), zh (`z`) |
 * | --- | --- | --- |
 * | `normalize` | off: the text as written (control characters dropped, white space collapsed) | the same |
 * | `unitNormalization` | `5 km`, `10 GB`, `25°C` → words; off: left as written | no unit reader: none |
 * | `urlNormalization` | `https://example.com/a-b` → "https example dot com slash a dash b" | no reader: none |
 * | `emailNormalization` | `jane.doe@example.com` → "jane dot doe at example dot com" | no reader: none |
 * | `optionalPluralizationNormalization` | `file(s)` → `files` | none |
 * | `phoneNormalization` | `555-123-4567` → "five five five, one two three, …" | no phone reader: none |
 * | `replaceRemainingSymbols` | on: Kokoro-FastAPI's table for symbols left after the rules | none |
 */
export interface NormalizationOptions {
  /** Off: no rule runs; the G2P reads the text as written. */
  readonly normalize: boolean;
  /** Numbers with a unit (`5 km`, `10 GB`, `3 m²`, `25°C`) read with the unit's name. */
  readonly unitNormalization: boolean;
  /** URLs (with `http://`, `https://`, `ftp://` or `www.`, a domain of a common TLD, an IPv4 address) spelled out. */
  readonly urlNormalization: boolean;
  /** E-mail addresses spelled out: "user at example dot com". */
  readonly emailNormalization: boolean;
  /** A plural in parentheses after a word (`file(s)`) read as the plural (`files`). */
  readonly optionalPluralizationNormalization: boolean;
  /** Phone numbers read digit by digit in groups; off, their digits go to the other number rules. */
  readonly phoneNormalization: boolean;
  /** Symbols left after the other rules (`%`, `+`, `=`, `/`, `$`, `#`, `<`, `>`, …) read as words or dropped. */
  readonly replaceRemainingSymbols: boolean;
}

/**
 * The switches of a request that sends no `normalization_options`: what the normalizer has always
 * done, so such a request sounds exactly as before. They differ from Kokoro-FastAPI's defaults in:
 * - `unitNormalization`: true (theirs false): "5 km" has always been "five kilometers" here.
 * - `urlNormalization`, `emailNormalization`: false (theirs true). URLs and addresses have always
 *   gone to the English G2P as written, which already reads `user@example.com` as "user at example
 *   dot com" and `example.com` as "example dot com"; true spells them out in the normalizer, which
 *   also drops the "colon slash slash" the G2P reads after `https`.
 * - `optionalPluralizationNormalization`: false (theirs true): `file(s)` has always gone as
 *   written, and the G2P reads "file" then "s".
 * - `replaceRemainingSymbols`: false (theirs true). The symbols this normalizer has always read
 *   are read whatever the switch: `&` "and", `@` "at", `#5` "number five", `~5` "about five",
 *   `50%`, and `+` and `=` beside digits (`2 + 2`, `x = 5`); true adds Kokoro-FastAPI's table for
 *   the rest.
 */
export const DEFAULT_NORMALIZATION: NormalizationOptions = Object.freeze({
  normalize: true,
  unitNormalization: true,
  urlNormalization: false,
  emailNormalization: false,
  optionalPluralizationNormalization: false,
  phoneNormalization: true,
  replaceRemainingSymbols: false,
});

/** Wire name (Kokoro-FastAPI's, snake_case) → field. */
export const NORMALIZATION_FIELDS = Object.freeze({
  normalize: 'normalize',
  unit_normalization: 'unitNormalization',
  url_normalization: 'urlNormalization',
  email_normalization: 'emailNormalization',
  optional_pluralization_normalization: 'optionalPluralizationNormalization',
  phone_normalization: 'phoneNormalization',
  replace_remaining_symbols: 'replaceRemainingSymbols',
} as const satisfies Record<string, keyof NormalizationOptions>);

type WireName = keyof typeof NORMALIZATION_FIELDS;

const PARAM = 'normalization_options';

function invalid(message: string): never {
  throw ttsError('TTS_ERR_INVALID_OPTION', message, { data: { param: PARAM } });
}

/**
 * The wire object → switches. Absent (`undefined` or `null`): the defaults; a field left out: its
 * default. Stricter than Kokoro-FastAPI's pydantic model, which ignores unknown fields and takes
 * `"true"` or `1` for true: an unknown field, or a value other than true or false, is refused with
 * `TTS_ERR_INVALID_OPTION` (param `normalization_options`), so a typo never goes unnoticed.
 */
export function parseNormalizationOptions(value: unknown): NormalizationOptions {
  if (value === undefined || value === null) return DEFAULT_NORMALIZATION;
  if (typeof value !== 'object' || Array.isArray(value))
    invalid(`${PARAM} should be an object of true/false switches; got ${describeValue(value)}`);
  const out: Record<keyof NormalizationOptions, boolean> = { ...DEFAULT_NORMALIZATION };
  for (const [name, v] of Object.entries(value)) {
    if (!Object.hasOwn(NORMALIZATION_FIELDS, name))
      invalid(
        `${PARAM} has no field ${JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name)}. Should be one of: ${Object.keys(NORMALIZATION_FIELDS).join(', ')}`,
      );
    if (v === undefined) continue;
    if (typeof v !== 'boolean') invalid(`${PARAM}.${name} should be true or false; got ${describeValue(v)}`);
    out[NORMALIZATION_FIELDS[name as WireName]] = v;
  }
  return Object.freeze(out);
}
