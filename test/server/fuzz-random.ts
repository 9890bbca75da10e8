/**
 * The fuzzer's seeded randomness (test/server/fuzz.test.ts): a small PRNG, JSON with what
 * JSON.stringify cannot write (literals such as 1e400, duplicate keys), and random characters,
 * strings, numbers and values.
 */
// ---------------------------------------------------------------------------------------------
// Seeded randomness

/** mulberry32: small, fast and good enough to drive a fuzzer reproducibly. */
export class Rng {
  #state: number;
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }
  next(): number {
    let t = (this.#state = (this.#state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer from lo to hi, both inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  bytes(n: number): Buffer {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) out[i] = Math.floor(this.next() * 256);
    return out;
  }
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }
}

// ---------------------------------------------------------------------------------------------
// JSON with the things JSON.stringify cannot write: literals such as 1e400 and duplicate keys

export class Raw {
  constructor(readonly json: string) {}
}
export class Entries {
  constructor(readonly list: [string, Json][]) {}
}
export type Json = null | boolean | number | string | Raw | Entries | Json[];

export function toJson(value: Json): string {
  if (value instanceof Raw) return value.json;
  if (value instanceof Entries)
    return `{${value.list.map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(',')}}`;
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  return JSON.stringify(value);
}

/** The request fields of the contract: random objects use them as keys half of the time. */
export const OPTION_NAMES = [
  'text',
  'voice',
  'speed',
  'format',
  'sample_rate',
  'request_id',
  'request_timestamp',
  'stream',
  'transport',
  'type',
];
/** Keys that look like a field, or like a property every object has. */
export const ODD_KEYS = [
  '',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'Text',
  'TEXT',
  ' text',
  'voice ',
];
export const WHITESPACE = [' ', '\t', '\n', '\r', '\u00a0', '\u2028', '\u2029', '\u3000', '\u200b', '\ufeff'];
const SPECIALS = ['{', '}', '[', ']', '"', '\\', ':', ',', '.', '!', '?', 'é', '😀', '\u0301', '<', '&'];

function randomChar(rng: Rng): string {
  switch (rng.int(0, 9)) {
    case 0:
    case 1:
    case 2:
    case 3:
      return String.fromCharCode(rng.int(0x20, 0x7e));
    case 4:
      return String.fromCharCode(rng.chance(0.9) ? rng.int(0, 0x1f) : 0x7f);
    case 5:
      return rng.pick(WHITESPACE);
    case 6: {
      const c = rng.int(0x80, 0xffff - 0x800);
      return String.fromCharCode(c >= 0xd800 ? c + 0x800 : c);
    }
    case 7:
      return String.fromCodePoint(rng.int(0x10000, 0x10ffff));
    case 8:
      // A lone surrogate: JSON.stringify escapes it (valid JSON); Buffer.from turns it into U+FFFD.
      return String.fromCharCode(rng.int(0xd800, 0xdfff));
    default:
      return rng.pick(SPECIALS);
  }
}

export function randomString(rng: Rng, max: number): string {
  const n = rng.chance(0.3) ? rng.int(0, 3) : rng.int(0, max);
  let s = '';
  for (let i = 0; i < n; i++) s += randomChar(rng);
  return s;
}

function randomNumber(rng: Rng): Json {
  switch (rng.int(0, 7)) {
    case 0:
      return rng.int(-10, 10);
    case 1:
      return rng.next() * 4 - 1;
    case 2:
      return rng.int(-(2 ** 31), 2 ** 31);
    case 3:
      return rng.pick([Number.MAX_SAFE_INTEGER, Number.MIN_VALUE, Number.MAX_VALUE, -Number.MAX_VALUE]);
    default:
      // Literals JSON allows but JSON.stringify never writes: Infinity after parsing, -0, exponents.
      return new Raw(rng.pick(['1e400', '-1e400', '-0', '1e-400', '0.5e1', '1E2', '2.0', '0.50', '1.0']));
  }
}

export function randomValue(rng: Rng, depth: number): Json {
  const choice = rng.int(0, depth > 0 ? 6 : 4);
  switch (choice) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return randomNumber(rng);
    case 3:
    case 4:
      return randomString(rng, 40);
    case 5:
      return Array.from({ length: rng.int(0, 4) }, () => randomValue(rng, depth - 1));
    default:
      return new Entries(
        Array.from({ length: rng.int(0, 4) }, () => [
          rng.chance(0.5) ? rng.pick(OPTION_NAMES) : randomString(rng, 8),
          randomValue(rng, depth - 1),
        ]),
      );
  }
}
