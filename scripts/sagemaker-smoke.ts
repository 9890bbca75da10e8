/**
 * Remote smoke test through the real SageMaker bidirectional API (`InvokeEndpointWithBidirectionalStream`):
 * opens one session with a deployed endpoint, sends every sentence at once as binary payload parts,
 * checks that each gets audio and `synthesis_complete` in order, closes with `{"type":"close"}` and
 * writes one WAV per sentence.
 *
 * Usage: `npm run smoke:sagemaker -- --endpoint NAME [--region R] [--voice V] [--out DIR]
 * [--text "..."]... [--timeout-ms N]`. Needs AWS credentials and the optional package
 * `@aws-sdk/client-sagemaker-runtime-http2`.
 *
 * The pieces are exported so that the unit tests can run them against a fake client; the command line
 * only runs when this file is the entry point.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { TtsEvent } from 'kokoro-stream-client';
import {
  SageMakerTtsSession,
  type BidiCommandFactory,
  type BidiStreamClient,
} from 'kokoro-stream-client/sagemaker';
import { wavFile } from '../model/audio/wav.ts';
import { codePointLength } from '../protocol/request.ts';
import {
  DEFAULT_TEXTS,
  PCM_SAMPLE_RATE,
  durationMatches,
  pcmSeconds,
  sessionFlags,
  textTable,
  wavName,
} from './lib/smoke-checks.ts';
import { parseFlags, runMain, UsageError } from './lib/cli.ts';
export { UsageError };

const USAGE = `Smoke test of a Kokoro endpoint through the SageMaker bidirectional streaming API.

Usage: npm run smoke:sagemaker -- --endpoint NAME [options]

Options:
  --endpoint NAME   SageMaker endpoint name (required)
  --region R        AWS region (default: the SDK's resolution, e.g. AWS_REGION)
  --voice ID        voice id or blend (default af_heart)
  --out DIR         directory for one WAV per sentence (default ./out/sagemaker-smoke)
  --text "..."      a sentence to synthesize; repeat for several (default: ${DEFAULT_TEXTS.length} sentences)
  --timeout-ms N    overall time limit in milliseconds (default 120000)
  --help            show this help

Needs AWS credentials and: npm install @aws-sdk/client-sagemaker-runtime-http2
Exit code 0 when every check passed, 1 when any failed, 2 on bad options.`;

// ---------------------------------------------------------------------------------------------
// Pure pieces
// ---------------------------------------------------------------------------------------------

/** Options of one run, as parsed from the command line. */
export interface SageMakerSmokeOptions {
  readonly endpoint: string;
  readonly region?: string;
  readonly voice: string;
  readonly outDir: string;
  readonly texts: readonly string[];
  readonly timeoutMs: number;
  readonly help: boolean;
}

/**
 * Parses the arguments after the script name.
 * @throws UsageError on unknown flags, a missing `--endpoint` or invalid values.
 */
export function parseCliArgs(argv: readonly string[]): SageMakerSmokeOptions {
  const values = parseFlags(argv, {
    endpoint: { type: 'string' },
    region: { type: 'string' },
    voice: { type: 'string' },
    out: { type: 'string' },
    text: { type: 'string', multiple: true },
    'timeout-ms': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  const help = values.help ?? false;
  const endpoint = values.endpoint?.trim() ?? '';
  if (endpoint === '' && !help) throw new UsageError('--endpoint NAME is required');

  const { timeoutMs, texts, voice } = sessionFlags(values, 120_000);

  return {
    endpoint,
    ...(values.region !== undefined ? { region: values.region } : {}),
    voice,
    outDir: values.out ?? './out/sagemaker-smoke',
    texts,
    timeoutMs,
    help,
  };
}

/** What one sentence got back. */
export interface SentenceResult {
  readonly index: number;
  readonly text: string;
  requestId: string;
  readonly chunks: Uint8Array[];
  bytes: number;
  sentAt: number;
  firstAudioAt?: number;
  complete?: { readonly totalDurationS: number; readonly elapsedS: number };
  error?: { readonly code: string; readonly message: string };
  /** Position among the answers (0 = answered first), to check the order. */
  answeredAs?: number;
}

/** One pass/fail line of the summary. */
export interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

/** Judges one sentence: audio, whole samples, `synthesis_complete`, order and duration. */
export function judgeSentence(result: SentenceResult): Check {
  const name = `sentence ${result.index + 1}`;
  const problems: string[] = [];
  if (result.error) problems.push(`error ${result.error.code}: ${result.error.message}`);
  else if (!result.complete) problems.push('no synthesis_complete');
  if (result.bytes === 0) problems.push('no audio');
  else if (result.bytes % 2 !== 0) problems.push(`odd byte count ${result.bytes} (not whole PCM16 samples)`);
  if (result.answeredAs !== undefined && result.answeredAs !== result.index) {
    problems.push(`answered in position ${result.answeredAs + 1}, sent in position ${result.index + 1}`);
  }
  if (result.complete && result.bytes > 0) {
    const seconds = pcmSeconds(result.bytes);
    if (!durationMatches(seconds, result.complete.totalDurationS)) {
      problems.push(
        `received ${seconds.toFixed(3)} s of audio, server reported ${result.complete.totalDurationS} s`,
      );
    }
  }
  return { name, ok: problems.length === 0, detail: problems.join('; ') };
}

/** Formats the per-sentence results as an aligned table (numbers right-aligned). */
export function formatTable(results: readonly SentenceResult[]): string {
  const headers = ['#', 'chars', 'bytes', 'audio s', 'server s', 'first audio ms', 'status'];
  const right = [true, true, true, true, true, true, false];
  const cells = results.map((r) => {
    const check = judgeSentence(r);
    return [
      String(r.index + 1),
      String(codePointLength(r.text)),
      String(r.bytes),
      r.bytes > 0 ? pcmSeconds(r.bytes).toFixed(2) : '-',
      r.complete ? r.complete.totalDurationS.toFixed(2) : '-',
      r.firstAudioAt !== undefined ? (r.firstAudioAt - r.sentAt).toFixed(0) : '-',
      check.ok ? 'ok' : 'FAIL',
    ];
  });
  return textTable(headers, right, cells);
}

// ---------------------------------------------------------------------------------------------
// Running a session
// ---------------------------------------------------------------------------------------------

/** Injected in tests instead of the real SDK client; `log` replaces console output. */
export interface SmokeDeps {
  readonly client?: BidiStreamClient;
  readonly commandFactory?: BidiCommandFactory;
  readonly log?: (line: string) => void;
}

/** Outcome of {@link runSmoke}. */
export interface SmokeReport {
  readonly results: readonly SentenceResult[];
  readonly checks: readonly Check[];
  readonly passed: number;
  readonly failed: number;
  readonly exitCode: number;
}

type Next = IteratorResult<TtsEvent, undefined> | 'timeout';

async function nextBefore(events: AsyncIterator<TtsEvent, undefined>, deadline: number): Promise<Next> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolveTimeout) => {
    timer = setTimeout(() => resolveTimeout('timeout'), Math.max(0, deadline - performance.now()));
  });
  try {
    return await Promise.race([events.next(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Sends every sentence at once over an open session, reads the answers, closes with
 * `{"type":"close"}` and reports session-level checks; the per-sentence verdicts come from
 * {@link judgeSentence}.
 */
export async function exerciseSession(
  session: SageMakerTtsSession,
  texts: readonly string[],
  voice: string,
  deadline: number,
): Promise<{ results: SentenceResult[]; checks: Check[] }> {
  const checks: Check[] = [];
  const events = session.events();
  const results: SentenceResult[] = texts.map((text, index) => ({
    index,
    text,
    requestId: '',
    chunks: [],
    bytes: 0,
    sentAt: 0,
  }));
  const byId = new Map<string, SentenceResult>();
  for (const result of results) {
    result.sentAt = performance.now();
    result.requestId = session.send(result.text, { voice });
    byId.set(result.requestId, result);
  }

  let answered = 0;
  let closedReason: string | undefined;
  const streamErrors: string[] = [];
  const settle = (result: SentenceResult | undefined): void => {
    if (result && result.answeredAs === undefined) result.answeredAs = answered++;
  };
  const handle = (event: TtsEvent): void => {
    const result =
      'requestId' in event && event.requestId !== undefined ? byId.get(event.requestId) : undefined;
    switch (event.type) {
      case 'audio':
        if (!result) break;
        result.firstAudioAt ??= performance.now();
        result.chunks.push(event.bytes);
        result.bytes += event.bytes.length;
        break;
      case 'complete':
        if (!result) break;
        result.complete = { totalDurationS: event.totalDurationS, elapsedS: event.elapsedS };
        settle(result);
        break;
      case 'error':
        if (result) {
          result.error = { code: event.code, message: event.message };
          settle(result);
        } else streamErrors.push(`${event.code}: ${event.message}`);
        break;
      case 'closed':
        closedReason = event.reason;
        break;
      case 'start':
        break;
    }
  };

  // Answers first; the close message goes out once every sentence is settled, so a failure to
  // answer is not mistaken for a close problem.
  while (closedReason === undefined && answered < results.length) {
    const next = await nextBefore(events, deadline);
    if (next === 'timeout' || next.done) break;
    handle(next.value);
  }
  const answeredAll = answered === results.length;
  checks.push({
    name: 'every sentence answered on one session',
    ok: answeredAll,
    detail: answeredAll
      ? ''
      : closedReason !== undefined
        ? `the session ended early (${closedReason})`
        : `${results.length - answered} sentence(s) unanswered before the time limit`,
  });

  if (closedReason === undefined) {
    void session.close().catch(() => undefined);
    for (;;) {
      const next = await nextBefore(events, deadline);
      if (next === 'timeout') {
        session.abort();
        break;
      }
      if (next.done) break;
      handle(next.value);
    }
  }
  checks.push({
    name: '{"type":"close"} ends the session cleanly',
    ok: closedReason === 'closed' && streamErrors.length === 0,
    detail:
      closedReason === undefined
        ? 'the response stream did not end before the time limit'
        : [closedReason === 'closed' ? '' : `ended with "${closedReason}"`, ...streamErrors]
            .filter(Boolean)
            .join('; '),
  });
  return { results, checks };
}

/** Writes one WAV per sentence that got audio; returns a line saying where they went. */
export async function writeWavs(results: readonly SentenceResult[], outDir: string): Promise<string> {
  const dir = resolve(outDir);
  const withAudio = results.filter((r) => r.bytes > 0);
  if (withAudio.length === 0) return 'no audio received, so no WAV files written';
  try {
    await mkdir(dir, { recursive: true });
    for (const r of withAudio) {
      await writeFile(join(dir, wavName(r.index, r.text)), wavFile(Buffer.concat(r.chunks), PCM_SAMPLE_RATE));
    }
    return `wrote ${withAudio.length} WAV file(s) to ${dir}`;
  } catch (err) {
    // Not an endpoint failure, so it does not change the verdict.
    return `could not write WAV files to ${dir}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** Runs the whole smoke test with parsed options; prints the table and the verdict. */
export async function runSmoke(options: SageMakerSmokeOptions, deps: SmokeDeps = {}): Promise<SmokeReport> {
  const log = deps.log ?? ((line: string) => console.log(line));
  const deadline = performance.now() + options.timeoutMs;
  log(`endpoint ${options.endpoint}${options.region ? ` (${options.region})` : ''}`);
  log(`voice    ${options.voice}, pcm s16le mono ${PCM_SAMPLE_RATE} Hz, ${options.texts.length} sentence(s)`);

  const checks: Check[] = [];
  let results: SentenceResult[] = [];
  let session: SageMakerTtsSession | undefined;
  const openedAt = performance.now();
  try {
    session = await SageMakerTtsSession.connect({
      endpointName: options.endpoint,
      ...(options.region !== undefined ? { region: options.region } : {}),
      ...(deps.client ? { client: deps.client } : {}),
      ...(deps.commandFactory ? { commandFactory: deps.commandFactory } : {}),
    });
    checks.push({
      name: 'bidirectional stream opens',
      ok: true,
      detail: `${Math.round(performance.now() - openedAt)} ms`,
    });
  } catch (err) {
    checks.push({
      name: 'bidirectional stream opens',
      ok: false,
      detail: err instanceof Error ? err.message : String(err),
    });
  }

  if (session) {
    const run = await exerciseSession(session, options.texts, options.voice, deadline);
    results = run.results;
    checks.push(...run.checks);
    log('');
    log(formatTable(results));
    log('');
    log(await writeWavs(results, options.outDir));
  }

  const all = [...checks, ...results.map(judgeSentence)];
  const failed = all.filter((c) => !c.ok);
  if (failed.length > 0) {
    log('\nFailed checks:');
    for (const c of failed) log(`  - ${c.name}: ${c.detail}`);
  }
  const passed = all.length - failed.length;
  log(`\n${passed} passed, ${failed.length} failed`);
  return { results, checks: all, passed, failed: failed.length, exitCode: failed.length === 0 ? 0 : 1 };
}

/** The command line: returns the exit code (0 all passed, 1 a check failed, 2 bad options). */
export async function main(argv: readonly string[], deps: SmokeDeps = {}): Promise<number> {
  const log = deps.log ?? ((line: string) => console.log(line));
  let options: SageMakerSmokeOptions;
  try {
    options = parseCliArgs(argv);
  } catch (err) {
    log(`error: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    log(USAGE);
    return 0;
  }
  return (await runSmoke(options, deps)).exitCode;
}

runMain(import.meta.url, 'smoke:sagemaker', () => main(process.argv.slice(2)));
