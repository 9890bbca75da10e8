/**
 * The vendors' shared voice and speed lookups (dialects/vendor-voices.ts), over every vendor's
 * voice table.
 */
import { describe, expect, it } from 'vitest';
import { CARTESIA_VOICES } from '../../../../dist/server/dialects/cartesia/voices.js';
import { ELEVENLABS_VOICES } from '../../../../dist/server/dialects/elevenlabs/voices.js';
import { vendorSpeed, vendorVoice } from '../../../../dist/server/dialects/vendor-voices.js';
import { engine, thrown, expectError } from './dialect-helpers.ts';

describe('vendorVoice', () => {
  it('maps a table id, and takes a Kokoro id or blend as it is', () => {
    expect(vendorVoice('pNInz6obpgDQGcFmaJgB', ELEVENLABS_VOICES, engine)).toBe('am_adam');
    expect(vendorVoice('71a7ad14-091c-4e8e-a314-022ece01c121', CARTESIA_VOICES, engine)).toBe('bf_emma');
    expect(vendorVoice('af_sky', ELEVENLABS_VOICES, engine)).toBe('af_sky');
    expect(vendorVoice('af_bella+af_sky', CARTESIA_VOICES, engine)).toBe('af_bella+af_sky');
  });

  it('maps every vendor voice to a voice of the catalog', () => {
    for (const table of [ELEVENLABS_VOICES, CARTESIA_VOICES]) {
      for (const [id, kokoro] of Object.entries(table)) {
        expect(vendorVoice(id, table, engine)).toBe(kokoro);
        expect(() => engine.voices.resolve(kokoro)).not.toThrow();
      }
    }
  });

  it.each([
    ['nope', ELEVENLABS_VOICES],
    ['pNInz6obpgDQGcFmaJgB', CARTESIA_VOICES],
    ['a0e99841-438c-4a64-b679-ae501e7d6091', ELEVENLABS_VOICES],
    ['constructor', ELEVENLABS_VOICES],
    ['__proto__', CARTESIA_VOICES],
  ] as const)('refuses %s where it is not mapped', (id, table) => {
    expectError(
      thrown(() => vendorVoice(id, table, engine)),
      'voice_not_found',
      new RegExp(
        `^Unknown voice "${id}": name a Kokoro voice \\(such as af_heart, or a blend af_bella\\+af_sky\\) or one of the mapped vendor voice ids listed in docs/protocol\\.md$`,
      ),
      'voice',
    );
  });

  it('quotes at most 64 characters of an unknown id', () => {
    const err = thrown(() => vendorVoice('v'.repeat(100), ELEVENLABS_VOICES, engine));
    expectError(err, 'voice_not_found', new RegExp(`^Unknown voice "${'v'.repeat(64)}": `), 'voice');
  });
});

describe('vendorSpeed', () => {
  const exportWith = (speedType: 'int32' | 'float32') =>
    ({ info: { contract: { speedType } } }) as unknown as Parameters<typeof vendorSpeed>[1];

  it('rounds a speed in range for an export whose speed input is int32, to 1 at least', () => {
    const int32 = exportWith('int32');
    expect([0.7, 1.1, 1.4, 1.6, 2].map((s) => vendorSpeed(s, int32))).toEqual([1, 1, 1, 2, 2]);
  });

  it('leaves a speed out of range (the parser refuses it), a non-number, and float32 exports alone', () => {
    expect(vendorSpeed(3, exportWith('int32'))).toBe(3);
    expect(vendorSpeed('fast', exportWith('int32'))).toBe('fast');
    expect(vendorSpeed(1.1, exportWith('float32'))).toBe(1.1);
  });
});
