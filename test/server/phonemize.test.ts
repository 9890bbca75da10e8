/**
 * Phonemes in, phonemes out: what POST /v1/phonemize makes of a text with the real front end, and
 * `phonemes` instead of `text` on POST /invocations. Their refusals are tested in-process
 * (test/app/phonemize.test.ts, test/app/invocations.test.ts, test/app/ws-session.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../../scripts/lib/server-process.ts';
import { projectPath } from '../../scripts/lib/paths.ts';

const MODEL_DIR = projectPath('test', 'fixtures', 'standin-model');
let server: ServerProcess;

beforeAll(async () => {
  server = await startServerProcess({ KOKORO_MODEL_DIR: MODEL_DIR, LOG_LEVEL: 'warn' });
});
afterAll(() => server.stop());

const post = (path: string, body: unknown) =>
  fetch(`${server.http}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

const vocab = (
  JSON.parse(readFileSync(join(MODEL_DIR, 'config.json'), 'utf8')) as { vocab: Record<string, number> }
).vocab;

describe('POST /v1/phonemize', () => {
  it("gives misaki's phonemes for English, their ids and the front end", async () => {
    const res = await post('/v1/phonemize', { text: 'The butter is better than the water.', lang: 'a' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      phonemes: string;
      tokens: number[];
      front_end: string;
      lang: string;
    };
    expect(body).toEqual({
      phonemes: 'ðə bˈʌTəɹ ɪz bˈɛTəɹ ðən ðə wˈɔTəɹ.',
      tokens: [...'ðə bˈʌTəɹ ɪz bˈɛTəɹ ðən ðə wˈɔTəɹ.'].map((c) => vocab[c]),
      front_end: 'misaki',
      lang: 'a',
    });
  });

  it('reads British English, another language by its tag, and the default voice’s language by default', async () => {
    const gb = (await (await post('/v1/phonemize', { text: 'Hello, world.', lang: 'en-gb' })).json()) as {
      phonemes: string;
      lang: string;
    };
    expect(gb).toMatchObject({ phonemes: 'həlˈQ, wˈɜːld.', lang: 'b' });
    const es = (await (await post('/v1/phonemize', { text: 'Hola, mundo.', lang: 'es' })).json()) as {
      front_end: string;
      lang: string;
    };
    expect(es).toMatchObject({ front_end: 'espeak-ng', lang: 'e' });
    const plain = (await (await post('/v1/phonemize', { text: 'Hello.' })).json()) as { lang: string };
    expect(plain.lang).toBe('a');
  });
});

describe('phonemes instead of text', () => {
  it('POST /invocations speaks a phoneme string as it is', async () => {
    const res = await post('/invocations', { phonemes: 'həlˈO wˈɜɹld. ɡˈʊd mˈɔɹnɪŋ!' });
    expect(res.status).toBe(200);
    const wav = Buffer.from(await res.arrayBuffer());
    expect(wav.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(wav.length).toBeGreaterThan(44 + 1000);
  });
});
