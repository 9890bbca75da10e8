/**
 * An engine without a model, for the HTTP layer's in-process tests: the `Engine` interface of
 * model/engine.ts, with the real voice catalog (the stand-in's voice files and kokoro-js's) and
 * the engine's own run and in-place encoders (PCM and WAV at 24 kHz). Each sentence becomes a
 * tone of 10 ms per character, divided by the speed, so tests can tell texts and speeds apart by
 * length. What it was asked is recorded; a failure or a hold can be set per engine.
 * Like the server tests, it runs the compiled code in dist/ (`npm test` builds first).
 */
import { fileURLToPath } from 'node:url';
import type { Engine, EngineInfo, SynthesisRequest } from '../../dist/model/engine.js';
import { PcmEncoder, WavEncoder } from '../../dist/model/audio/wav.js';
import { SAMPLE_RATE } from '../../dist/model/kokoro/constants.js';
import { VoiceCatalog, kokoroJsVoiceDir } from '../../dist/model/kokoro/voices.js';
import { runSynthesis, type AudioChunk } from '../../dist/model/synthesis/run.js';
import { Segmenter, scriptOf, type ScriptSettings, type Segment } from '../../dist/model/synthesis/script.js';
import { phonemeSentences } from '../../dist/model/synthesis/sentences.js';
import { hasMarkup } from '../../dist/model/text/markup.js';
import { displayText } from '../../dist/model/text/parts.js';
import { voiceLanguages } from '../../dist/model/text/languages/index.js';
import { splitSentences } from '../../dist/model/text/sentences.js';
import { visemeOf } from '../../dist/model/text/visemes.js';
import { abortError } from '../../dist/protocol/errors.js';

const STANDIN_VOICES = fileURLToPath(new URL('../fixtures/standin-model/voices', import.meta.url));

export interface FakeEngineOptions {
  /** Thrown when a request's first sentence is synthesized. */
  readonly fail?: unknown;
  /** Each sentence waits for this before its audio exists, and each phonemize before its answer. */
  readonly hold?: Promise<void>;
  /** The loaded export can time words. */
  readonly timestamps?: boolean;
  /** Inference workers ready, as `/ping` reports them. */
  readonly workers?: number;
}

export interface FakeEngine extends Engine {
  /** Every request synthesized, in order. */
  readonly requests: SynthesisRequest[];
  /** Requests whose audio is being produced now. */
  readonly open: number;
  /** Texts being phonemized now (waiting for the hold, say). */
  readonly phonemizing: number;
}

export function fakeEngine(options: FakeEngineOptions = {}): FakeEngine {
  const voices = new VoiceCatalog(
    [STANDIN_VOICES, kokoroJsVoiceDir()].filter((d): d is string => d !== undefined),
    voiceLanguages(),
  );
  const requests: SynthesisRequest[] = [];
  let open = 0;
  let phonemizing = 0;
  const info: EngineInfo = {
    provider: 'cpu',
    modelFile: 'fake.onnx',
    layout: 'onnx-community',
    dtype: 'fp32',
    workers: options.workers ?? 1,
    contract: {
      ids: 'input_ids',
      style: 'style',
      speed: 'speed',
      speedType: 'float32',
      output: 'waveform',
      ...(options.timestamps ? { durations: 'durations' } : {}),
    },
    warmupMs: 0,
    warmupLadder: [],
    voices: voices.ids.length,
    languages: voices.languages.map((code) => ({ code, tag: code, name: code })),
    formats: ['pcm', 'wav'],
    capabilities: { timestamps: options.timestamps === true },
    telemetry: 'off',
    english: { frontEnd: 'misaki', lexiconDir: 'none' },
  };

  function scriptSettings(settings: Parameters<Engine['segmenter']>[0]): ScriptSettings {
    return {
      voice: settings.voice,
      speed: settings.speed,
      ...(settings.lang !== undefined ? { lang: settings.lang } : {}),
      resolveVoice: (spec, lang) => voices.resolve(spec, lang),
      pronunciations: (lang) =>
        settings.pronunciations?.lang === lang ? settings.pronunciations : undefined,
      firstChunkMinChars: 0,
      mode: settings.markup,
    };
  }

  async function* stream(request: SynthesisRequest, signal?: AbortSignal): AsyncGenerator<AudioChunk> {
    requests.push(request);
    open++;
    try {
      const segments: Iterable<Segment> | AsyncIterable<Segment> =
        typeof request.text !== 'string'
          ? request.text
          : (request.phonemes ? phonemeSentences(request.text) : splitSentences(request.text)).map(
              (text): Segment => ({
                kind: 'speech',
                parts: [{ text }],
                voice: request.voice,
                speed: request.speed,
              }),
            );
      let index = 0;
      for await (const segment of segments) {
        if (index === 0 && options.fail !== undefined) throw options.fail;
        await options.hold;
        if (signal?.aborted) throw abortError();
        if (segment.kind === 'pause')
          yield {
            samples: new Int16Array(Math.round(segment.ms * 24)),
            sentence: index++,
            phonemeCount: 0,
            inferenceMs: 0,
          };
        else if (segment.kind === 'mark')
          yield {
            samples: new Int16Array(0),
            sentence: index++,
            phonemeCount: 0,
            inferenceMs: 0,
            mark: segment.name,
          };
        else
          yield tone(displayText(segment.parts), segment.speed, index++, {
            words: request.timestamps === true,
            phonemes: request.phonemeTimestamps === true,
          });
      }
    } finally {
      open--;
    }
  }

  return {
    info,
    voices,
    requests,
    get open() {
      return open;
    },
    get phonemizing() {
      return phonemizing;
    },
    load: () => ({ queued: 0, ahead: 0, busy: open, workers: info.workers, completed: 0, inferences: 0 }),
    synthesize: (request, output, { signal, startedAt } = {}) =>
      runSynthesis(
        stream(request, signal),
        (format, sampleRate) => (format === 'wav' ? new WavEncoder(sampleRate) : new PcmEncoder()),
        output,
        startedAt ?? performance.now(),
      ),
    stream,
    phonemize: async ({ text, lang }) => ({
      phonemes: text.toLowerCase(),
      ids: [...text].map((c) => c.charCodeAt(0) % 178),
      frontEnd: 'fake',
      lang,
    }),
    readText: (text, settings) =>
      hasMarkup(text, settings.markup) ? scriptOf(text, scriptSettings(settings)) : { warnings: [] },
    segmenter: (settings) => new Segmenter(scriptSettings(settings)),
    phonemizeText: async (text, settings) => {
      phonemizing++;
      try {
        await options.hold;
      } finally {
        phonemizing--;
      }
      const {
        segments = [{ kind: 'speech', parts: [{ text }], voice: settings.voice, speed: 1 }],
        warnings,
      } = hasMarkup(text, settings.markup) ? scriptOf(text, scriptSettings(settings)) : { warnings: [] };
      const spoken = segments.flatMap((s) =>
        s.kind === 'speech' ? [displayText(s.parts).toLowerCase()] : [],
      );
      return {
        phonemes: spoken.join(' '),
        ids: [...spoken.join(' ')].map((c) => c.charCodeAt(0) % 178),
        frontEnd: 'fake',
        lang: settings.voice.lang,
        segments: segments.map((s) =>
          s.kind === 'pause'
            ? { pause_ms: s.ms }
            : s.kind === 'mark'
              ? { mark: s.name }
              : {
                  phonemes: displayText(s.parts).toLowerCase(),
                  lang: s.voice.lang,
                  voice: s.voice.key,
                  speed: s.speed,
                },
        ),
        warnings,
      };
    },
    streamedFirstChunkMinChars: () => 0,
    dispose: async () => {},
  };
}

/** A sentence as 10 ms of a 440 Hz tone per character, at `speed`; with its words timed evenly. */
/** A sentence's tone; timed (words spread evenly, each character a sound) when asked. */
function tone(
  sentence: string,
  speed: number,
  index: number,
  timed: { readonly words: boolean; readonly phonemes: boolean },
): AudioChunk {
  const samples = new Int16Array(Math.round((sentence.length * SAMPLE_RATE) / 100 / speed));
  for (let i = 0; i < samples.length; i++)
    samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / SAMPLE_RATE));
  const words = sentence.split(/\s+/).filter(Boolean);
  const seconds = samples.length / SAMPLE_RATE;
  return {
    samples,
    sentence: index,
    phonemeCount: sentence.length,
    inferenceMs: 1,
    frontEndMs: 0,
    queueMs: 0,
    ...(timed.words
      ? {
          words: words.map((word, i) => ({
            word,
            start_s: (i * seconds) / words.length,
            end_s: ((i + 1) * seconds) / words.length,
          })),
        }
      : {}),
    ...(timed.phonemes
      ? {
          phonemes: [...sentence].map((phoneme, i, all) => ({
            phoneme,
            viseme: visemeOf(phoneme),
            start_s: (i * seconds) / all.length,
            end_s: ((i + 1) * seconds) / all.length,
          })),
        }
      : {}),
  };
}
