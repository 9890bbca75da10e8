import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../server/config.ts';

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
