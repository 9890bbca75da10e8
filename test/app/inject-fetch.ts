/**
 * `fetch` over the app's `inject()`, for a client that takes a fetch of its own (the official
 * `openai` SDK): the SDK's requests reach the app in-process, and its answers come back as
 * `Response`s, whole (inject waits for the end of a streamed body).
 */
import type { FastifyInstance, HTTPMethods } from 'fastify';

export function injectFetch(app: FastifyInstance): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const answer = await app.inject({
      method: request.method as HTTPMethods,
      url: url.pathname + url.search,
      headers: Object.fromEntries(request.headers),
      ...(request.body ? { payload: Buffer.from(await request.arrayBuffer()) } : {}),
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      for (const v of [value ?? []].flat()) headers.append(name, String(v));
    }
    const empty = answer.statusCode === 204 || answer.statusCode === 304;
    return new Response(empty ? null : answer.rawPayload, { status: answer.statusCode, headers });
  };
}
