import { availableParallelism } from 'node:os';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { LanguageCode } from '../../../model/engine.ts';
import { ConfigError, parseConfig, type Config } from '../../../server/config/config.ts';
import {
  formatValue,
  parseValue,
  readSetting,
  type BoolSetting,
  type IntSetting,
  type OneOfSetting,
  type Setting,
} from '../../../server/config/setting-kinds.ts';
import { SETTINGS as TABLE } from '../../../server/config/settings.ts';

/** The table, each entry seen as any setting. */
const SETTINGS: readonly Setting[] = TABLE;

describe('parseConfig', () => {
  it('has SageMaker-friendly defaults', () => {
    const c = parseConfig({});
    expect(c).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      modelDir: '/opt/ml/model',
      dtype: 'fp32',
      device: 'auto',
      defaultVoice: 'af_heart',
      maxTextChars: 4096,
      maxRequestAgeS: 56,
      logLevel: 'info',
      fetchModel: false,
      ortSpinning: false,
      ortCpuArena: false,
      firstChunkMinChars: 24,
      firstChunkBudgetMs: 250,
      lookaheadSentences: 2,
    });
    expect(c.workers).toBeGreaterThanOrEqual(1);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('serves the browser page unless WEB_PAGE turns it off, and refuses a value that is not a boolean', () => {
    expect(parseConfig({}).webPage).toBe(true);
    expect(parseConfig({ WEB_PAGE: 'false' }).webPage).toBe(false);
    expect(parseConfig({ WEB_PAGE: 'off' }).webPage).toBe(false);
    expect(() => parseConfig({ WEB_PAGE: 'maybe' })).toThrow(/WEB_PAGE="maybe" should be true or false/);
  });

  it('keeps EMF metrics off by default, with a namespace and a dimension ready, and refuses bad ones', () => {
    expect(parseConfig({})).toMatchObject({
      metricsEmf: false,
      metricsEmfNamespace: 'KokoroTTS',
      metricsEmfDimensions: { Service: 'kokoro-tts' },
      metricsEmfIntervalS: 60,
      maxHttpStreams: 256,
    });
    expect(() => parseConfig({ METRICS_EMF_DIMENSIONS: 'EndpointName' })).toThrow(
      /METRICS_EMF_DIMENSIONS="EndpointName" should be Name=Value pairs/,
    );
    expect(() => parseConfig({ METRICS_EMF_NAMESPACE: 'AWS/SageMaker' })).toThrow(/not start with AWS\//);
  });

  it('lets SAGEMAKER_BIND_TO_PORT win over PORT', () => {
    expect(parseConfig({ PORT: '9000' }).port).toBe(9000);
    expect(parseConfig({ PORT: '9000', SAGEMAKER_BIND_TO_PORT: '8081' }).port).toBe(8081);
  });

  it('reads every documented variable', () => {
    const c = parseConfig({
      HOST: '127.0.0.1',
      KOKORO_MODEL_DIR: './models/kokoro-82m',
      KOKORO_DTYPE: 'q8',
      KOKORO_DEVICE: 'CUDA',
      KOKORO_WORKERS: '3',
      KOKORO_INTRA_OP_THREADS: '2',
      KOKORO_DEFAULT_VOICE: 'bf_emma',
      MAX_TEXT_CHARS: '100',
      MAX_REQUEST_AGE_S: '10',
      MAX_BODY_BYTES: '2048',
      WS_MAX_MESSAGE_BYTES: '2097152',
      WS_MAX_PENDING: '5',
      MAX_QUEUED_JOBS: '7',
      SHUTDOWN_GRACE_S: '3',
      LOG_LEVEL: 'debug',
      KOKORO_FETCH_MODEL: 'yes',
      KOKORO_WARMUP_LENGTHS: '64,16',
      KOKORO_ORT_SPINNING: 'on',
      KOKORO_ORT_CPU_ARENA: 'true',
      FIRST_CHUNK_MIN_CHARS: '40',
      LOOKAHEAD_SENTENCES: '0',
      UTTERANCE_MAX_BUFFER_BYTES: '4096',
      UTTERANCE_IDLE_FLUSH_S: '0',
      MAX_HTTP_STREAMS: '6',
      METRICS_EMF: 'true',
      METRICS_EMF_NAMESPACE: 'Voice/Prod',
      METRICS_EMF_DIMENSIONS: 'EndpointName=kokoro,VariantName=AllTraffic',
      METRICS_EMF_INTERVAL_S: '10',
    });
    expect(c).toMatchObject({
      maxHttpStreams: 6,
      metricsEmf: true,
      metricsEmfNamespace: 'Voice/Prod',
      metricsEmfDimensions: { EndpointName: 'kokoro', VariantName: 'AllTraffic' },
      metricsEmfIntervalS: 10,
      host: '127.0.0.1',
      modelDir: './models/kokoro-82m',
      dtype: 'q8',
      device: 'cuda',
      workers: 3,
      intraOpThreads: 2,
      ortSpinning: true,
      ortCpuArena: true,
      firstChunkMinChars: 40,
      lookaheadSentences: 0,
      utteranceMaxBufferBytes: 4096,
      utteranceIdleFlushS: 0,
      defaultVoice: 'bf_emma',
      maxTextChars: 100,
      maxRequestAgeS: 10,
      maxBodyBytes: 2048,
      wsMaxMessageBytes: 2097152,
      wsMaxPending: 5,
      maxQueuedJobs: 7,
      shutdownGraceS: 3,
      logLevel: 'debug',
      fetchModel: true,
      warmupLengths: [16, 64],
    });
    expect(parseConfig({}).warmupLengths).toBe('auto');
  });

  it('reports every problem at once, saying what is valid', () => {
    try {
      parseConfig({
        PORT: 'eighty',
        KOKORO_DEVICE: 'tpu',
        KOKORO_DTYPE: 'int3',
        KOKORO_WORKERS: '0',
        KOKORO_WARMUP_LENGTHS: '600',
      });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const message = (err as Error).message;
      expect(message).toContain('PORT="eighty" should be a whole number from 0 to 65535');
      expect(message).toContain('KOKORO_DEVICE="tpu" should be one of: auto, cuda, cpu');
      expect(message).toContain('KOKORO_DTYPE="int3" should be one of: fp32, fp16, q8, q8f16, q4, q4f16');
      expect(message).toContain('KOKORO_WORKERS="0" should be a whole number from 1 to 64');
      expect(message).toContain('KOKORO_WARMUP_LENGTHS="600" should be auto, none, or comma-separated');
    }
  });
});

const DEFAULTS = parseConfig({});
const ofKind = <S extends Setting>(kind: S['kind']) =>
  SETTINGS.filter((s): s is S => s.kind === kind).map((s) => [s.name, s] as const);
/** The field a setting fills, if any. */
const fieldOf = (s: Setting) => s.key as keyof Config | undefined;
/** What a setting yields: its field, or (for a setting read before the configuration) itself read alone. */
const valueOf = (s: Setting, env: Record<string, string>): unknown => {
  const key = fieldOf(s);
  return key === undefined ? readSetting(s, env).value : parseConfig(env)[key];
};

describe('the settings table', () => {
  it('fills every field of Config, and Config has no other: its type is computed from the table', () => {
    const keys = new Set(SETTINGS.flatMap((s) => (s.key === undefined ? [] : [s.key])));
    expect(Object.keys(DEFAULTS).sort()).toEqual([...keys].sort());
    expectTypeOf<keyof Config>().toEqualTypeOf<NonNullable<(typeof TABLE)[number]['key']>>();
    // Each field has the type its entry's kind yields; text with no default may be unset.
    expectTypeOf<Config['port']>().toEqualTypeOf<number>();
    expectTypeOf<Config['webPage']>().toEqualTypeOf<boolean>();
    expectTypeOf<Config['device']>().toEqualTypeOf<'auto' | 'cuda' | 'cpu'>();
    expectTypeOf<Config['host']>().toEqualTypeOf<string>();
    expectTypeOf<Config['authToken']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<Config['corsOrigins']>().toEqualTypeOf<readonly string[]>();
    expectTypeOf<Config['warmLanguages']>().toEqualTypeOf<readonly LanguageCode[]>();
  });

  it('names each variable once, in upper case', () => {
    const names = SETTINGS.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names.filter((n) => !/^[A-Z][A-Z0-9_]*$/.test(n))).toEqual([]);
  });

  it.each(SETTINGS.map((s) => [s.name, s] as const))(
    '%s: its default, written out, parses back',
    (name, s) => {
      const key = fieldOf(s);
      const value = key === undefined ? readSetting(s, {}).value : DEFAULTS[key];
      const written = formatValue(s, value);
      expect(valueOf(s, { [name]: written })).toEqual(value);
      // The whole configuration stays the default one: the written value means nothing else.
      expect(parseConfig({ [name]: written })).toEqual(DEFAULTS);
    },
  );

  it.each(ofKind<IntSetting>('int'))('%s takes its bounds and refuses one past each', (name, s) => {
    expect(valueOf(s, { [name]: String(s.min) })).toBe(s.min);
    expect(valueOf(s, { [name]: String(s.max) })).toBe(s.max);
    const range = `should be ${s.auto ? 'auto or ' : ''}a whole number from ${s.min} to ${s.max}`;
    for (const wrong of [s.min - 1, s.max + 1, s.min + 0.5]) {
      expect(() => parseConfig({ [name]: String(wrong) })).toThrow(`${name}="${wrong}" ${range}`);
    }
  });

  it.each(ofKind<BoolSetting>('bool'))('%s reads the usual spellings and refuses "maybe"', (name, s) => {
    const spellings = new Map([
      ['true', true],
      [' YES ', true],
      ['on', true],
      ['1', true],
      ['false', false],
      ['No', false],
      ['off', false],
      ['0', false],
    ]);
    for (const [raw, value] of spellings) expect(valueOf(s, { [name]: raw })).toBe(value);
    expect(() => parseConfig({ [name]: 'maybe' })).toThrow(`${name}="maybe" should be true or false`);
  });

  it.each(ofKind<OneOfSetting>('oneOf'))('%s reads each of its values and refuses others', (name, s) => {
    for (const value of s.values) expect(valueOf(s, { [name]: ` ${value.toUpperCase()} ` })).toBe(value);
    expect(() => parseConfig({ [name]: 'nonsense' })).toThrow(
      `${name}="nonsense" should be one of: ${s.values.join(', ')}`,
    );
  });

  it('takes `auto` where an int allows it, as its default', () => {
    const auto = ofKind<IntSetting>('int').filter(([, s]) => s.auto);
    expect(auto.map(([name]) => name)).toEqual(['KOKORO_SOLO_THREADS']);
    for (const [name, s] of auto) expect(valueOf(s, { [name]: 'Auto' })).toEqual(DEFAULTS[fieldOf(s)!]);
  });

  it('holds no setting of a kind it cannot read', () => {
    // Shaped as a boolean setting in all but its kind.
    const float = {
      kind: 'float',
      name: 'KOKORO_SPEED',
      key: undefined,
      default: true,
      description: 'a kind that does not exist',
    } as const;
    // @ts-expect-error: the table's type admits only the kinds that parseValue reads
    const entry: Setting = float;
    expect(() => parseValue(entry, '1.5')).toThrow('no kind of setting is called "float"');
    expect(() => formatValue(entry, 1)).toThrow('no kind of setting is called "float"');
  });
});

describe('KOKORO_SOLO_THREADS', () => {
  it('auto: every core for a pool of several single-thread workers on CPU; none on CUDA or with one worker', () => {
    const cores = availableParallelism();
    expect(parseConfig({ KOKORO_WORKERS: '2', KOKORO_INTRA_OP_THREADS: '1' }).soloThreads).toBe(
      cores > 1 ? cores : 0,
    );
    expect(
      parseConfig({ KOKORO_WORKERS: '2', KOKORO_INTRA_OP_THREADS: '1', KOKORO_DEVICE: 'cuda' }).soloThreads,
    ).toBe(0);
    expect(parseConfig({ KOKORO_WORKERS: '1' }).soloThreads).toBe(0);
    expect(parseConfig({ KOKORO_WORKERS: '2', KOKORO_SOLO_THREADS: '0' }).soloThreads).toBe(0);
    expect(parseConfig({ KOKORO_WORKERS: '2', KOKORO_SOLO_THREADS: '3' }).soloThreads).toBe(3);
    expect(() => parseConfig({ KOKORO_SOLO_THREADS: 'many' })).toThrow(/KOKORO_SOLO_THREADS="many"/);
  });

  it('KOKORO_SOLO_MIN_MS: 50 ms by default, any whole number of milliseconds, 0 for every lone sentence', () => {
    expect(parseConfig({}).soloMinMs).toBe(50);
    expect(parseConfig({ KOKORO_SOLO_MIN_MS: '0' }).soloMinMs).toBe(0);
    expect(parseConfig({ KOKORO_SOLO_MIN_MS: '250' }).soloMinMs).toBe(250);
    expect(() => parseConfig({ KOKORO_SOLO_MIN_MS: '-1' })).toThrow(/KOKORO_SOLO_MIN_MS="-1"/);
  });
});
