/**
 * What reaches ONNX Runtime, read back from the model itself: the echo stand-in
 * (`make-standin-model --echo`) returns its three inputs as extra outputs, and the server logs
 * them at debug level. English goes in as misaki's phonemes, the style row is the voice's
 * `pack[len(ps) - 1]` (hexgrad/kokoro `KPipeline`), the speed is the request's.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeStandinModelDir } from '../../scripts/lib/standin-model.ts';
import { startServerProcess, type ServerProcess } from '../../scripts/lib/server-process.ts';
import { waitFor } from '../wait.ts';

const STYLE_DIM = 256;
let dir: string;
let server: ServerProcess;
/** The same server without misaki's lexicons. */
let bare: ServerProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kokoro-echo-'));
  await writeStandinModelDir(dir, { echo: true, log: () => {} });
  [server, bare] = await Promise.all([
    startServerProcess({ KOKORO_MODEL_DIR: dir, LOG_LEVEL: 'debug' }),
    startServerProcess({
      KOKORO_MODEL_DIR: dir,
      KOKORO_LEXICON_DIR: join(dir, 'no-such-folder'),
      LOG_LEVEL: 'debug',
    }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([server?.stop(), bare?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

interface Fed {
  readonly phonemes: string;
  readonly ids: number[];
  readonly style: number[];
  readonly speed: number;
}

async function synthesize(body: Record<string, unknown>): Promise<Fed[]> {
  const before = server.logs().length;
  const res = await fetch(`${server.http}/invocations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  return fedSince(server, before);
}

const FED = 'model input, as the model handed it back';

/**
 * The model inputs logged since line `before`, once the request's own end is logged: every run of
 * the request logs its input before its audio is sent, so before that line (one log, in order),
 * though the log may trail the response by a little.
 */
async function fedSince(s: ServerProcess, before: number): Promise<Fed[]> {
  const lines = await waitFor(() => s.logs().slice(before), {
    until: (since) => since.some((l) => l.msg === 'request completed'),
    timeoutMs: 5000,
    what: 'the request completed line',
  });
  return lines.filter((l) => l.msg === FED) as unknown as Fed[];
}

const vocab = (): Record<string, number> =>
  (JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as { vocab: Record<string, number> }).vocab;

/** Row `row` of a voice file: 510 rows of 256 float32. */
function voiceRow(voice: string, row: number): number[] {
  const bytes = readFileSync(join(dir, 'voices', `${voice}.bin`));
  const table = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  return Array.from(table.subarray(row * STYLE_DIM, (row + 1) * STYLE_DIM));
}

describe('what the model is fed', () => {
  it("English as misaki's phonemes, padded ids of Kokoro's vocabulary, style row len(ps) - 1, the speed asked for", async () => {
    const fed = await synthesize({
      text: 'The butter is better than the water, said the kitten.',
      voice: 'af_heart',
      speed: 1.25,
      first_chunk: 'sentence',
    });
    expect(fed).toHaveLength(1);
    const [run] = fed as [Fed];
    // misaki's lexicon: butter bˈʌɾəɹ, better bˈɛɾəɹ, than ðən, water wˈɔɾəɹ, kitten kˈɪʔn; v1.0: ɾ→T, ʔ→t.
    expect(run.phonemes).toBe('ðə bˈʌTəɹ ɪz bˈɛTəɹ ðən ðə wˈɔTəɹ, sˈɛd ðə kˈɪtn.');
    const v = vocab();
    expect(run.ids).toEqual([0, ...[...run.phonemes].map((c) => v[c]), 0]);
    expect(run.style).toEqual(voiceRow('af_heart', [...run.phonemes].length - 1));
    expect(run.speed).toBeCloseTo(1.25, 6);
  });

  it('British English through its own lexicon, with a British voice', async () => {
    const [run] = (await synthesize({ text: 'Hello, world.', voice: 'bf_emma' })) as [Fed];
    expect(run.phonemes).toBe('həlˈQ, wˈɜːld.');
    expect(run.style).toEqual(voiceRow('bf_emma', [...run.phonemes].length - 1));
    expect(run.speed).toBe(1);
  });

  it('a phonemes request reaches the model as it was sent, one run per sentence', async () => {
    const fed = await synthesize({ phonemes: 'həlˈO wˈɜɹld. ɡˈʊd mˈɔɹnɪŋ!', voice: 'af_heart' });
    // Two workers may run the two sentences at once: their order in the log is not theirs.
    expect(fed.map((f) => f.phonemes).toSorted()).toEqual(['həlˈO wˈɜɹld.', 'ɡˈʊd mˈɔɹnɪŋ!'].toSorted());
    const v = vocab();
    const hello = fed.find((f) => f.phonemes === 'həlˈO wˈɜɹld.')!;
    expect(hello.ids).toEqual([0, ...[...'həlˈO wˈɜɹld.'].map((c) => v[c]), 0]);
  });

  it('says at startup and in /ping which English front end runs', async () => {
    const ping = (await (await fetch(`${server.http}/ping`)).json()) as { english_front_end: string };
    expect(ping.english_front_end).toBe('misaki');
    await expect.poll(() => server.logs().find((l) => l.msg === 'ready')?.englishFrontEnd).toBe('misaki');
  });
});

describe('without the lexicons', () => {
  it("says so, and still feeds only misaki's symbols", async () => {
    const ping = (await (await fetch(`${bare.http}/ping`)).json()) as { english_front_end: string };
    expect(ping.english_front_end).toBe('misaki-espeak');
    // The warning follows the ready line, which may trail /ping's first 200 on its own pipe.
    await expect
      .poll(() =>
        bare.logs().some((l) => l.level === 40 && String(l.msg).includes("without misaki's lexicons")),
      )
      .toBe(true);
    const before = bare.logs().length;
    const res = await fetch(`${bare.http}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'The butter is better than the water.' }),
    });
    await res.arrayBuffer();
    const [fed] = await fedSince(bare, before);
    expect(fed?.phonemes).toBe('ðə bˈʌTəɹ ɪz bˈɛTəɹ ðən ðə wˈɔTəɹ.');
  });
});
