import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { STYLE_DIM, VOICE_FILE_BYTES, VOICE_ROWS } from '../../../model/kokoro/constants.ts';
import { TtsError } from '../../../protocol/errors.ts';
import { voiceLanguages } from '../../../model/text/languages/index.ts';
import {
  VoiceCatalog,
  VoiceStore,
  blendVoiceTables,
  kokoroJsVoiceDir,
  parseVoiceSpec,
  styleRow,
  voiceTableFromBytes,
} from '../../../model/kokoro/voices.ts';

describe('parseVoiceSpec', () => {
  const good = new Map<string, [string, number][]>([
    ['af_heart', [['af_heart', 1]]],
    [
      'af_bella+af_sky',
      [
        ['af_bella', 0.5],
        ['af_sky', 0.5],
      ],
    ],
    [
      'af_bella(2)+af_sky(1)',
      [
        ['af_bella', 2 / 3],
        ['af_sky', 1 / 3],
      ],
    ],
    [
      ' af_bella(0.25) + af_sky(0.75) ',
      [
        ['af_bella', 0.25],
        ['af_sky', 0.75],
      ],
    ],
    ['af_sky+af_sky', [['af_sky', 1]]],
  ]);
  for (const [spec, expected] of good) {
    it(`parses ${spec}`, () => {
      const parts = parseVoiceSpec(spec);
      expect(parts.map((p) => p.id)).toEqual(expected.map(([id]) => id));
      parts.forEach((p, i) => expect(p.weight).toBeCloseTo(expected[i]![1], 10));
    });
  }

  const bad = new Map<string, RegExp>([
    ['', /must not be empty/],
    ['AF_HEART', /Unknown voice "AF_HEART"/],
    ['af_nobody', /Unknown voice "af_nobody".*af_heart/],
    ['../../etc/passwd', /Unknown voice "..\/..\/etc\/passwd"/],
    ['af_bella(0x10)', /positive finite number/],
    ['af_bella(1e3)', /positive finite number/],
    ['af_bella(0)+af_sky', /positive finite number/],
    ['af_bella(-1)', /positive finite number/],
    ['af_bella(abc)', /positive finite number/],
    ['af_bella()', /positive finite number/],
    ['af_bella(Infinity)', /positive finite number/],
    [Array(9).fill('af_sky').join('+'), /at most 8 voices/],
    ['af_bella++af_sky', /Unknown voice ""/],
  ]);
  for (const [spec, message] of bad) {
    it(`rejects ${JSON.stringify(spec)}`, () => {
      expect(() => parseVoiceSpec(spec)).toThrow(TtsError);
      expect(() => parseVoiceSpec(spec)).toThrow(message);
    });
  }
});

describe('voice tables', () => {
  const table = (fill: (i: number) => number) =>
    Float32Array.from({ length: VOICE_ROWS * STYLE_DIM }, (_, i) => fill(i));

  it("picks style row min(max(n - 1, 0), 509), KPipeline's pack[len(ps) - 1]", () => {
    const t = table((i) => Math.floor(i / STYLE_DIM));
    expect(styleRow(t, 0)[0]).toBe(0);
    expect(styleRow(t, 1)[0]).toBe(0);
    expect(styleRow(t, 37)[255]).toBe(36);
    expect(styleRow(t, 510)[0]).toBe(509);
    expect(styleRow(t, 509)[0]).toBe(508);
    expect(styleRow(t, 900)[0]).toBe(509);
    expect(styleRow(t, -3)[0]).toBe(0);
    expect(styleRow(t, 10)).toHaveLength(STYLE_DIM);
  });

  it('blends by normalized weight', () => {
    const a = table(() => 1);
    const b = table(() => 4);
    const mixed = blendVoiceTables([
      { table: a, weight: 2 / 3 },
      { table: b, weight: 1 / 3 },
    ]);
    expect(mixed[0]).toBeCloseTo(2, 5);
    expect(mixed[mixed.length - 1]).toBeCloseTo(2, 5);
  });

  it('reads little-endian float32 and refuses a wrong size', () => {
    const bytes = Buffer.alloc(VOICE_FILE_BYTES);
    bytes.writeFloatLE(1.5, 4);
    expect(voiceTableFromBytes(bytes, 'x')[1]).toBe(1.5);
    expect(() => voiceTableFromBytes(Buffer.alloc(10), 'short.bin')).toThrow(
      /short.bin has 10 bytes; expected 522240/,
    );
  });
});

describe('VoiceCatalog', () => {
  const dir = mkdtempSync(join(tmpdir(), 'voices-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const voice = Buffer.alloc(VOICE_FILE_BYTES);
  voice.writeFloatLE(0.25, 0);
  writeFileSync(join(dir, 'af_heart.bin'), voice);
  writeFileSync(join(dir, 'af_sky.bin'), Buffer.alloc(100)); // wrong size: ignored

  const catalog = new VoiceCatalog([dir], voiceLanguages(['a', 'b']));

  it('lists only well-formed files', () => {
    expect(catalog.ids).toEqual(['af_heart']);
    expect(catalog.has('af_sky')).toBe(false);
  });

  it('resolves a present voice with its file and language', () => {
    const r = catalog.resolve('af_heart');
    expect(r.lang).toBe('a');
    expect(r.parts[0]!.file).toBe(join(dir, 'af_heart.bin'));
  });

  it('refuses a published voice whose file is missing', () => {
    expect(() => catalog.resolve('af_sky')).toThrow(/Unknown voice "af_sky"/);
  });

  it('loads and caches tables', async () => {
    const store = new VoiceStore();
    const r = catalog.resolve('af_heart');
    const first = await store.get(r);
    expect(first[0]).toBe(0.25);
    expect(await store.get(r)).toBe(first);
  });

  it('finds every v1.0 voice in kokoro-js, and refuses languages it cannot phonemize', () => {
    const shipped = kokoroJsVoiceDir();
    expect(shipped).toBeDefined();
    const full = new VoiceCatalog([shipped!], voiceLanguages(['a', 'b']));
    expect(full.ids).toHaveLength(54);
    expect(() => full.resolve('ef_dora')).toThrow(/speaks Spanish.*supported languages: American English/);
    expect(() => full.resolve('af_bella+bf_emma')).toThrow(/one language/);
    expect(full.resolve('bf_emma(1)+bm_george(3)').key).toBe('bf_emma(0.25)+bm_george(0.75)');
  });

  it('reads the text in the language `lang` names, if it can phonemize it', () => {
    const full = new VoiceCatalog([kokoroJsVoiceDir()!], voiceLanguages(['a', 'b']));
    expect(full.languages).toEqual(['a', 'b']);
    expect(full.resolve('ef_dora', 'en-US').lang).toBe('a');
    expect(full.resolve('af_heart', 'b').lang).toBe('b');
    expect(full.resolve('af_heart').lang).toBe('a');
    expect(() => full.resolve('af_heart', 'es')).toThrow(
      /lang "es" is Spanish, which this server cannot phonemize; supported languages: American English/,
    );
    expect(() => full.resolve('af_heart', 'klingon')).toThrow(/Unknown lang "klingon"/);
    expect(() => full.resolve('af_bella+ef_dora', 'a')).toThrow(/one language/);
  });
});
