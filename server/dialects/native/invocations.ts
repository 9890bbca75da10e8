/**
 * POST /invocations: one input, audio streamed back sentence by sentence as it is synthesized —
 * raw bytes with chunked transfer, or Server-Sent Events carrying base64 audio — or one complete
 * file with `stream: false`.
 */
import { Readable } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import type { PhonemeTiming, WordTiming } from '../../../model/engine.ts';
import { FORMATS } from '../../../protocol/formats.ts';
import { timedPhonemes } from '../../../protocol/frames.ts';
import { formatSseEvent } from '../../../protocol/sse.ts';
import type { Config } from '../../config/config.ts';
import { toErrorBody, ttsError, withRequestId } from '../../http/errors.ts';
import type { Lifecycle } from '../../http/lifecycle.ts';
import { firstAudio, sendAudioStream, startHttpSynthesis, type HttpSynthesis } from '../../http/synthesis.ts';
import { PlainText, parseOptions, peekRequestId, type SynthesisOptions } from '../../http/request.ts';
import { isCancelled } from '../../observability/outcomes.ts';

function wantsSse(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept);
}

export const invocationRoutes: FastifyPluginAsync<{ config: Config; lifecycle: Lifecycle }> = async (
  app,
  { config, lifecycle },
) => {
  app.post('/invocations', async (request, reply) => {
    const engine = lifecycle.requireEngine();
    const body = request.body;
    let fields: Record<string, unknown>;
    if (body instanceof PlainText) fields = { text: body.text };
    else if (body !== null && typeof body === 'object' && !Array.isArray(body))
      fields = body as Record<string, unknown>;
    else {
      throw ttsError(
        'TTS_ERR_BAD_REQUEST',
        `The JSON body should be an object such as {"text": "Hello"}; got ${Array.isArray(body) ? 'an array' : body === null ? 'null' : typeof body}`,
      );
    }
    const requestId = peekRequestId(fields);
    let options: SynthesisOptions;
    try {
      options = parseOptions(fields, {
        route: 'http',
        config,
        engine,
        defaultTransport: wantsSse(request.headers.accept) ? 'sse' : 'binary',
      });
    } catch (err) {
      throw withRequestId(err, requestId);
    }
    // Over SSE, each chunk's words and sounds (when asked for) and the marks before its audio wait
    // here, in order, until its audio event goes out.
    const pending: string[] = [];
    const request_id = options.requestId;
    const sse = options.transport === 'sse';
    const synthesis = startHttpSynthesis(request, reply, lifecycle, options, {
      limits: config,
      complete: !options.stream,
      ...(options.timestamps
        ? {
            onWords: (words: readonly WordTiming[]) =>
              pending.push(formatSseEvent('word_timestamps', { request_id, words })),
          }
        : {}),
      ...(options.phonemeTimestamps
        ? {
            onPhonemes: (phonemes: readonly PhonemeTiming[]) =>
              pending.push(
                formatSseEvent('phoneme_timestamps', { request_id, phonemes: timedPhonemes(phonemes) }),
              ),
          }
        : {}),
      ...(sse
        ? {
            onMark: (name: string, time_s: number) =>
              pending.push(formatSseEvent('mark', { request_id, name, time_s })),
          }
        : {}),
    });
    // Known before any audio, so a header on every transport (on the binary one, only markup can
    // be dropped: timestamps need SSE).
    if (options.warnings.length > 0) reply.header('x-markup-warnings', asciiJson(options.warnings));

    if (options.transport === 'sse') {
      reply.header('cache-control', 'no-cache').header('x-accel-buffering', 'no');
      return reply
        .type('text/event-stream; charset=utf-8')
        .send(Readable.from(sseStream(synthesis, pending)));
    }

    const contentType = FORMATS[options.format].contentType(options.sampleRate);
    if (options.stream) return sendAudioStream(reply, synthesis, contentType);

    // One complete file: its figures are known before the body goes out, so they travel as
    // headers (as the reference container sends them).
    const whole = await firstAudio(synthesis, synthesis.run[Symbol.asyncIterator]());
    if (!whole) return reply; // the client went away
    const figures = synthesis.completed();
    reply
      .header('X-Audio-Duration', String(figures.audioS))
      .header('X-Inference-Time-Ms', String(figures.inferenceMs))
      .header('X-RTF', String(figures.rtf))
      .header('X-Characters-Processed', String(options.chars));
    return reply.type(contentType).send(whole.done ? Buffer.alloc(0) : Buffer.from(whole.value));
  });
};

/** JSON with every character past ASCII escaped: a header's value. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * The SSE body: `audio_stream_start` at once (before inference), one `audio_chunk` per encoded
 * buffer (whole frames, base64), each after the `word_timestamps` and `phoneme_timestamps` of its
 * chunk when asked for, then `audio_stream_end`, or `error` if synthesis fails.
 */
async function* sseStream(synthesis: HttpSynthesis, pending: string[]): AsyncGenerator<string> {
  const { run, options, signal, log } = synthesis;
  const request_id = options.requestId;
  yield formatSseEvent('audio_stream_start', {
    request_id,
    format: options.format,
    voice: options.voiceSpec,
    sample_rate: options.sampleRate,
  });
  let seq = 0;
  try {
    for await (const bytes of run) {
      yield* pending.splice(0);
      yield formatSseEvent('audio_chunk', {
        request_id,
        seq: seq++,
        data: Buffer.from(bytes).toString('base64'),
      });
    }
  } catch (err) {
    if (signal.aborted || isCancelled(err)) return;
    const { status, body } = toErrorBody(err, request_id);
    if (status >= 500) log.error({ err, ...run.figures() }, 'synthesis failed after the event stream began');
    yield formatSseEvent('error', { request_id, code: body.code, message: body.message });
    return;
  }
  yield* pending.splice(0);
  const { audioS } = synthesis.completed('sse');
  yield formatSseEvent('audio_stream_end', {
    request_id,
    total_chunks: seq,
    duration_s: audioS,
    ...(options.warnings.length > 0 ? { warnings: [...options.warnings] } : {}),
  });
}
