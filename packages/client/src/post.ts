/**
 * One streaming `POST /invocations`: the answer's body as it arrives. Plain `fetch`, so it runs in
 * browsers as well as in Node.js.
 */
import type { HttpOptions, SynthesisOptions } from '../../../protocol/request.ts';
import { TtsRequestError } from './session-core.ts';

/** Options of {@link postSpeech} about the HTTP call itself. */
export interface PostSpeechInit {
  /** The fetch implementation; the global `fetch` by default. */
  readonly fetch?: typeof fetch;
  readonly signal?: AbortSignal;
  /** Extra headers, e.g. `authorization` for a server with `AUTH_TOKEN`. */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * Sends `text` to `${base}/invocations` and yields the body's bytes chunk by chunk, as the server
 * writes them: audio in `options.format` (WAV by default), or SSE events with `transport: 'sse'`
 * (read them with `readSse`). `{ phonemes }` instead of text speaks Kokoro's phoneme symbols as they
 * are (`POST /v1/phonemize` gives them for a text).
 *
 * @example
 * for await (const bytes of postSpeech('http://localhost:8080', 'Hello.', { format: 'pcm' })) play(bytes);
 *
 * @throws TtsRequestError with the server's code (`busy`, `voice_not_found`, …) when it answers
 * other than 200, or `http_<status>` when the body says none.
 */
export async function* postSpeech(
  base: string | URL,
  input: string | { readonly phonemes: string },
  options: SynthesisOptions & HttpOptions = {},
  init: PostSpeechInit = {},
): AsyncGenerator<Uint8Array, void, undefined> {
  const res = await (init.fetch ?? fetch)(`${String(base).replace(/\/+$/, '')}/invocations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...init.headers },
    body: JSON.stringify({ ...options, ...(typeof input === 'string' ? { text: input } : input) }),
    ...(init.signal ? { signal: init.signal } : {}),
  });
  if (res.status !== 200) {
    const body = (await res.json().catch(() => ({}))) as { code?: unknown; message?: unknown };
    throw new TtsRequestError(
      typeof body.code === 'string' ? body.code : `http_${res.status}`,
      typeof body.message === 'string' ? body.message : `HTTP ${res.status}`,
      options.request_id,
    );
  }
  if (!res.body) return;
  // getReader(), not for await: not every browser makes a ReadableStream async-iterable.
  const reader = res.body.getReader();
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) yield next.value;
  } finally {
    // A consumer that stops early cancels the request, so the server stops synthesizing for it.
    await reader.cancel().catch(() => {});
  }
}
