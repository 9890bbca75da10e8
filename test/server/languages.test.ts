/**
 * Every language through a running server: all 54 voices speak a sentence of their own language
 * over one WebSocket session and over POST, no phoneme falls outside Kokoro's vocabulary, `lang`
 * changes how a text is read, /ping lists the languages, and a voice or `lang` the server cannot
 * serve gets a clear error while the session goes on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICE_IDS } from '../../model/kokoro/constants.ts';
import { TestClient, requestsOf, startServer, type TestServer } from './harness.ts';

/** One sentence per language, with a number and, in some, money. */
const SENTENCES: Record<string, string> = {
  a: 'The train leaves at 8:15, and a ticket costs $12.50.',
  b: 'The train leaves at half past eight, and a ticket costs £12.',
  e: '¿El tren sale a las 8? Sí, y el billete cuesta 12,50 €.',
  f: 'Le train part à 8 heures, et le billet coûte 12,50 €.',
  h: 'ट्रेन 8 बजे निकलती है, और टिकट ₹120 का है।',
  i: 'Il treno parte alle 8, e il biglietto costa 12,50 €.',
  j: '電車は8時に出発します。切符は1200円です。',
  p: 'O trem sai às 8 horas, e a passagem custa R$ 12,50.',
  z: '火车8点出发，车票12.5元。',
};

let server: TestServer;
beforeAll(async () => {
  // Spanish and Japanese are warmed at startup; the others load at their first sentence.
  server = await startServer({ KOKORO_WARM_LANGUAGES: 'e,ja' });
});
afterAll(async () => {
  await server.close();
});

async function post(
  body: Record<string, unknown>,
): Promise<{ status: number; bytes: Buffer; json?: unknown }> {
  const response = await fetch(`${server.http}/invocations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ format: 'pcm', ...body }),
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  const json = response.headers.get('content-type')?.includes('json')
    ? JSON.parse(bytes.toString())
    : undefined;
  return { status: response.status, bytes, json };
}

describe('all 54 voices speak their own language', () => {
  it('over one WebSocket session, in order, each with audio', async () => {
    expect(VOICE_IDS).toHaveLength(54);
    const client = await TestClient.open(server.ws);
    for (const voice of VOICE_IDS) {
      client.send({ text: SENTENCES[voice[0]!]!, voice, request_id: voice });
    }
    await client.untilControls('synthesis_complete', VOICE_IDS.length);
    expect(client.controls('error')).toEqual([]);
    const requests = requestsOf(client.frames);
    expect(requests.map((r) => r.id)).toEqual([...VOICE_IDS]);
    for (const r of requests) {
      const bytes = r.audio.reduce((n, b) => n + b.length, 0);
      expect(bytes, r.id).toBeGreaterThan(24_000); // over half a second of PCM16 at 24 kHz
    }
    client.send({ type: 'close' });
  }, 120_000);

  it('over POST, one voice per language', async () => {
    for (const lang of Object.keys(SENTENCES)) {
      const voice = VOICE_IDS.find((v) => v.startsWith(lang))!;
      const { status, bytes } = await post({ text: SENTENCES[lang], voice });
      expect(status, voice).toBe(200);
      expect(bytes.length, voice).toBeGreaterThan(24_000);
    }
  });

  it('and no phoneme fell outside Kokoro’s vocabulary', async () => {
    const metrics = await (await fetch(`${server.http}/metrics`)).text();
    expect(metrics).toContain('tts_unknown_phonemes_total');
    expect(metrics.match(/^tts_unknown_phonemes_total\{.*$/gm) ?? []).toEqual([]);
  });

  it('(the control: a symbol outside it is dropped, the sentence spoken, and the drop counted)', async () => {
    // The Mandarin front end passes "#" through: Kokoro has no such phoneme.
    const { status, bytes } = await post({ text: '火车#出发。', voice: 'zf_xiaobei' });
    expect(status).toBe(200);
    expect(bytes.length).toBeGreaterThan(0);
    // /metrics renders at most once a second: ask until the count is in.
    const counted = async () =>
      (await (await fetch(`${server.http}/metrics`)).text()).match(/^tts_unknown_phonemes_total\{.*$/gm);
    await expect.poll(counted, { timeout: 5_000 }).toEqual(['tts_unknown_phonemes_total{language="z"} 1']);
  });
});

describe('lang', () => {
  it('reads the text in the language it names, whatever the voice', async () => {
    const text = SENTENCES.e!;
    const spanish = await post({ text, voice: 'ef_dora' });
    const asEnglish = await post({ text, voice: 'ef_dora', lang: 'en-US' });
    const named = await post({ text, voice: 'af_heart', lang: 'es' });
    expect([spanish.status, asEnglish.status, named.status]).toEqual([200, 200, 200]);
    // The stand-in's audio length follows the phonemes: English rules read Spanish differently.
    expect(asEnglish.bytes.length).not.toBe(spanish.bytes.length);
    expect(named.bytes.length).toBe(spanish.bytes.length);
  });

  it('/ping lists the nine languages', async () => {
    const ping = (await (await fetch(`${server.http}/ping`)).json()) as { languages: { code: string }[] };
    expect(ping.languages.map((l) => l.code)).toEqual(['a', 'b', 'e', 'f', 'h', 'i', 'j', 'p', 'z']);
    expect(ping.languages).toContainEqual({ code: 'p', tag: 'pt-BR', name: 'Brazilian Portuguese' });
  });
});

describe('what the server cannot serve gets a clear error, and the session goes on', () => {
  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    [
      'a language it has no front end for',
      { text: 'Guten Tag.', voice: 'af_heart', lang: 'de' },
      'language_unsupported',
      /Unknown lang "de"; supported languages: American English .*Mandarin Chinese/,
    ],
    ['lang of the wrong type', { text: 'Hi.', lang: 7 }, 'invalid_option', /lang should be a string/],
    [
      'a blend across languages',
      { text: 'Hola.', voice: 'ef_dora+ff_siwis' },
      'language_unsupported',
      /A blend must use voices of one language; ef_dora is Spanish but ff_siwis is French/,
    ],
  ];

  it.each(cases)('%s', async (_name, send, code, message) => {
    const client = await TestClient.open(server.ws);
    client.send(send);
    client.send({ text: SENTENCES.f!, voice: 'ff_siwis', request_id: 'after' });
    await client.untilControls('synthesis_complete', 1);
    const [error] = client.controls('error');
    expect(error).toMatchObject({ code });
    expect(String(error!.message)).toMatch(message);
    expect(requestsOf(client.frames).map((r) => r.id)).toEqual(['after']);
    client.send({ type: 'close' });

    const http = await post(send);
    expect(http.status).toBe(400);
    expect(http.json).toMatchObject({ type: 'error', code });
  });
});
