/**
 * The inference worker: one ONNX session and one espeak-ng instance, on its own thread, so that
 * blocking native inference and WebAssembly phonemization never stall the server's event loop.
 * It handles one sentence at a time: normalize → phonemize → ids (split at 510) → ONNX → samples.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { floatToPcm16 } from '../audio/pcm.ts';
import { languageOf, normalizeFor } from '../text/languages/index.ts';
import { KokoroSession } from './ort-session.ts';
import { configureEnglish, frontEndName, phonemize, warmUpPhonemizer } from '../text/phonemes.ts';
import { filterToVocab, padIds, phonemesToIds, splitPhonemes } from '../text/tokens.ts';
import { VoiceStore, styleRow } from '../kokoro/voices.ts';
import type { FromWorker, PhonemizeResult, SentenceJob, ToWorker, WorkerInit } from './messages.ts';
import { warmupIds, warmupLengths, type WarmupStep } from './warmup.ts';
import { WordTimer, planParts, planWords } from '../text/alignment.ts';
import { timePhonemes } from '../text/phoneme-timing.ts';
import { isAliasPart, isPhonemePart, isStressPart } from '../text/parts.ts';

const port = parentPort;
if (!port) throw new Error('model/inference/inference-worker.ts must run in a worker thread');

const init = workerData as WorkerInit;

// espeak-ng (WebAssembly) prints to the console, e.g. "Can't read dictionary file" for scripts it
// has no dictionary for. The server's output is JSON log lines, so such text goes to the parent,
// which logs it properly. Replaced before the phonemizer is loaded: it binds console at import.
const forward = (...args: unknown[]) =>
  port.postMessage({ type: 'log', message: args.map(String).join(' ').slice(0, 500) } satisfies FromWorker);
// eslint-disable-next-line no-console -- replacing console is the point here
console.log = console.info = console.warn = console.error = console.debug = forward;
const voices = new VoiceStore();
let session: KokoroSession;
/** The solo session (all cores), when this worker has one. */
let soloSession: KokoroSession | undefined;

function post(message: FromWorker, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

// Stopping is cooperative: ending the thread while ONNX Runtime runs a call aborts the process
// (onnxruntime-node throws from native code into a dying environment). So the thread ends only
// between native calls: at once when none runs, else as soon as the running one returns.
let stopRequested = false;
/** Jobs cancelled while running (or about to run): their remaining pieces are skipped. */
const cancelled = new Set<number>();
let nativeCalls = 0;

function endThread(): never {
  process.exit(0); // in a worker, this ends the thread only
}

/** Runs one ONNX Runtime call; if a stop arrived meanwhile, the thread ends when it returns. */
async function native<T>(call: () => Promise<T>): Promise<T> {
  nativeCalls++;
  try {
    return await call();
  } finally {
    nativeCalls--;
    if (stopRequested && nativeCalls === 0) endThread();
  }
}

/** Phonemes for one sentence, filtered to the vocabulary and split into inference-sized pieces. */
async function frontEnd(job: FrontEndInput): Promise<string[]> {
  if (job.phonemes) return splitPhonemes(job.text); // checked against the vocabulary by the server
  const { kept, unknown } = filterToVocab(await sentencePhonemes(job));
  if (Object.keys(unknown).length > 0) post({ type: 'unknown-phonemes', lang: job.lang, symbols: unknown });
  return splitPhonemes(kept);
}

type FrontEndInput = Pick<SentenceJob, 'text' | 'lang' | 'phonemes' | 'parts' | 'normalization'>;

/**
 * A sentence's phonemes, before the vocabulary filter. In parts: the text around fixed readings is
 * normalized part by part (so an alias is read as written, and markup never reaches the
 * normalizer), each run of it phonemized whole, and fixed phonemes set in between as they are.
 */
async function sentencePhonemes({ text, lang, parts, normalization }: FrontEndInput): Promise<string> {
  const normalize = (s: string) => normalizeFor(s, lang, normalization);
  if (!parts) return phonemize(normalize(text), lang);
  const readsStress = languageOf(lang).readsStressMarkup;
  let out = '';
  let run = '';
  const endRun = async () => {
    if (run.trim() !== '') out = joinPhonemes(out, await phonemize(run.replace(/\s+/g, ' ').trim(), lang));
    run = '';
  };
  for (const part of parts) {
    if (isPhonemePart(part)) {
      await endRun();
      out = joinPhonemes(out, part.phonemes);
    } else if (isAliasPart(part)) run += normalize(part.spoken);
    // misaki's markdown, read by a G2P that reads it (English's); other languages read the word.
    else if (isStressPart(part)) run += readsStress ? `[${part.text.trim()}](${part.stress})` : part.text;
    else run += keepEdges(part.text, normalize);
  }
  await endRun();
  return out;
}

/** Normalizes `text` and keeps the white space it had at either end (the normalizer trims). */
function keepEdges(text: string, normalize: (s: string) => string): string {
  const lead = /^\s*/.exec(text)![0];
  const trail = text.length > lead.length ? /\s*$/.exec(text)![0] : '';
  return `${lead ? ' ' : ''}${normalize(text)}${trail ? ' ' : ''}`;
}

/** Two phoneme strings in a row: a space between words, none before punctuation. */
function joinPhonemes(a: string, b: string): string {
  if (a === '') return b;
  return /^[,.!?;:…—)»”"]/.test(b) ? `${a}${b}` : `${a} ${b}`;
}

/** The front end alone: what a sentence of `text` would feed the model. */
async function phonemizeOnly(input: FrontEndInput): Promise<PhonemizeResult> {
  const { kept } = filterToVocab(await sentencePhonemes(input));
  return { phonemes: kept, ids: phonemesToIds(kept), frontEnd: frontEndName(input.lang) };
}

async function runJob(job: SentenceJob): Promise<void> {
  if (init.faultInjection) {
    if (job.text.includes('__crash_worker__')) process.exit(70);
    if (job.text.includes('__fail_inference__')) throw new Error('injected inference failure');
  }
  for (const id of cancelled) if (id < job.id) cancelled.delete(id); // arrived after their job ended
  const t0 = performance.now();
  const pieces = await frontEnd(job);
  const normalizeWord = (word: string) => normalizeFor(word, job.lang, job.normalization);
  const timer = job.timestamps
    ? new WordTimer(
        job.parts
          ? planParts(job.parts, normalizeWord, pieces)
          : planWords(job.text, normalizeWord, pieces, job.at),
      )
    : undefined;
  const frontEndMs = performance.now() - t0;
  const table = await voices.get(job.voice);
  let run = 0;
  for (const [i, piece] of pieces.entries()) {
    if (cancelled.delete(job.id)) break;
    run++;
    const ids = phonemesToIds(piece);
    const started = performance.now();
    const runner = job.solo && soloSession ? soloSession : session;
    const { waveform, durations, echo } = await native(() =>
      runner.run(padIds(ids), styleRow(table, ids.length), job.speed),
    );
    if (echo) post({ type: 'model-input', phonemes: piece, input: echo });
    const inferenceMs = performance.now() - started;
    const words = timer && durations ? timer.piece(i, durations, waveform.length) : undefined;
    const phonemes =
      job.phonemeTimestamps && durations ? timePhonemes(piece, durations, waveform.length) : undefined;
    const samples = floatToPcm16(waveform);
    post(
      {
        type: 'chunk',
        id: job.id,
        samples,
        phonemeCount: ids.length,
        inferenceMs,
        ...(i === 0 ? { frontEndMs } : {}),
        ...(words ? { words } : {}),
        ...(phonemes ? { phonemes } : {}),
      },
      [samples.buffer as ArrayBuffer],
    );
  }
  cancelled.delete(job.id);
  post({ type: 'end', id: job.id, frontEndMs, pieces: run });
}

async function start(): Promise<void> {
  const t0 = performance.now();
  let fallbackReason: string | undefined;
  session = await native(() =>
    KokoroSession.create(init.modelFile, {
      device: init.device,
      intraOpThreads: init.intraOpThreads,
      allowSpinning: init.allowSpinning,
      cpuArena: init.cpuArena,
      logSeverity: init.logSeverity,
      onFallback: (reason) => (fallbackReason = reason),
    }),
  );
  // The solo session exists only on CPU: on a GPU one session already has the whole device. Its
  // threads spin between operators (ONNX Runtime's default): it runs only while the pool is
  // otherwise idle, so spinning takes no core from other work, while waking a sleeping thread at
  // every operator costs a lone sentence time.
  if (init.soloThreads > 0 && session.provider === 'cpu') {
    soloSession = await native(() =>
      KokoroSession.create(init.modelFile, {
        device: 'cpu',
        intraOpThreads: init.soloThreads,
        allowSpinning: true,
        cpuArena: init.cpuArena,
        logSeverity: init.logSeverity,
      }),
    );
  }
  // Warm up: espeak's first calls are slow, and so is the first inference (of each session).
  configureEnglish(init.lexiconDir);
  await warmUpPhonemizer(init.warmLanguages);
  const table = await voices.get(init.warmupVoice);
  const ids = phonemesToIds((await frontEnd({ text: 'Hello there.', lang: 'a' }))[0] ?? 'h');
  await native(() => session.run(padIds(ids), styleRow(table, ids.length), 1));
  // A sentence of ordinary length, twice (the second warm), tells the pool what a sentence costs
  // this model on one pool session, per character of text.
  const costText = 'The train leaves at a quarter past eight, and the next one follows an hour later.';
  const costIds = phonemesToIds((await frontEnd({ text: costText, lang: 'a' }))[0] ?? 'h');
  await native(() => session.run(padIds(costIds), styleRow(table, costIds.length), 1));
  const timed = performance.now();
  await native(() => session.run(padIds(costIds), styleRow(table, costIds.length), 1));
  const msPerChar = (performance.now() - timed) / costText.length;
  // The same sentence on the solo session, so the dispatch policy knows what every core gains.
  let soloMsPerChar: number | undefined;
  if (soloSession) {
    const solo = soloSession;
    await native(() => solo.run(padIds(costIds), styleRow(table, costIds.length), 1));
    const soloTimed = performance.now();
    await native(() => solo.run(padIds(costIds), styleRow(table, costIds.length), 1));
    soloMsPerChar = (performance.now() - soloTimed) / costText.length;
  }
  // The ladder: each length twice, so the log shows what the first call at a new shape costs.
  const ladder: WarmupStep[] = [];
  for (const tokens of warmupLengths(init.warmupLengths, session.provider)) {
    const input = padIds(warmupIds(tokens));
    const style = styleRow(table, tokens);
    const first = performance.now();
    await native(() => session.run(input, style, 1));
    const second = performance.now();
    await native(() => session.run(input, style, 1));
    ladder.push({ tokens, firstMs: second - first, repeatMs: performance.now() - second });
  }
  post({
    type: 'ready',
    provider: session.provider,
    contract: session.contract,
    warmupMs: performance.now() - t0,
    ladder,
    msPerChar,
    ...(soloMsPerChar !== undefined ? { soloMsPerChar } : {}),
    ...(fallbackReason ? { fallbackReason } : {}),
  });
}

// Jobs (sentences and phonemize jobs) are handled strictly one after another; the pool never
// sends a second before the first's answer, but the chain keeps that true even if it did.
let chain: Promise<void> = Promise.resolve();
port.on('message', (message: ToWorker) => {
  if (message.type === 'stop') {
    stopRequested = true;
    if (nativeCalls === 0) endThread();
    return;
  }
  if (message.type === 'cancel') {
    // Handled on arrival, not in turn: the job it names is running now.
    cancelled.add(message.id);
    return;
  }
  const failed = (err: unknown) => (err instanceof Error ? err.message : String(err));
  if (message.type === 'phonemize') {
    chain = chain.then(() =>
      phonemizeOnly(message).then(
        (result) => post({ type: 'phonemized', id: message.id, ...result }),
        (err: unknown) => post({ type: 'phonemize-failed', id: message.id, message: failed(err) }),
      ),
    );
    return;
  }
  chain = chain.then(() =>
    runJob(message).catch((err: unknown) => {
      post({ type: 'error', id: message.id, message: failed(err) });
    }),
  );
});

start().catch((err: unknown) => {
  post({ type: 'fatal', message: err instanceof Error ? err.message : String(err) });
});
