/** Timing a POST /invocations the way a client feels it. */
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * Milliseconds from sending a POST to its first body byte, and the bytes of the answer. Resolves
 * only when the whole answer has arrived, so the next trial does not compete with this one's
 * remaining sentences. A status other than 200 rejects.
 */
export function timePost(
  http: string,
  body: Record<string, unknown>,
): Promise<{ ttfaMs: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(`${http}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    req.on('response', (res) => {
      if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}`));
      let first: number | undefined;
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        first ??= performance.now() - started;
        bytes += c.length;
      });
      res.on('end', () => resolve({ ttfaMs: first ?? NaN, bytes }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
