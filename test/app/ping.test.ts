/** GET /ping through the app in-process: starting, ready, degraded, draining. */
import { afterEach, describe, expect, it } from 'vitest';
import { inProcessApp, type InProcessApp } from './in-process.ts';

let running: InProcessApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe('GET /ping', () => {
  it('answers 503 starting until the engine is ready, then 200 healthy with its facts', async () => {
    running = await inProcessApp({}, { engine: false });
    const cold = await running.app.inject({ method: 'GET', url: '/ping' });
    expect(cold.statusCode).toBe(503);
    expect(cold.json()).toEqual({ status: 'starting' });
    const ready = await inProcessApp();
    try {
      for (const method of ['GET', 'POST'] as const) {
        const warm = await ready.app.inject({ method, url: '/ping' });
        expect(warm.statusCode).toBe(200);
        expect(warm.json()).toMatchObject({
          status: 'healthy',
          provider: 'cpu',
          workers: 1,
          formats: ['pcm', 'wav'],
        });
      }
    } finally {
      await ready.close();
    }
  });

  it('answers 503 degraded while every inference worker is being replaced', async () => {
    running = await inProcessApp({}, { engine: { workers: 0 } });
    const res = await running.app.inject({ method: 'GET', url: '/ping' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ status: 'degraded', workers: 0 });
  });

  it('answers 503 draining once shutdown began, while POSTs are refused with Retry-After', async () => {
    running = await inProcessApp();
    await running.lifecycle.drain(1000);
    const ping = await running.app.inject({ method: 'GET', url: '/ping' });
    expect(ping.statusCode).toBe(503);
    expect(ping.json()).toEqual({ status: 'draining' });
    const post = await running.app.inject({ method: 'POST', url: '/invocations', payload: { text: 'Hi.' } });
    expect(post.statusCode).toBe(503);
    expect(post.headers['retry-after']).toBe('1');
    expect(post.json()).toMatchObject({ code: 'shutting_down', error: 'shutting_down' });
    expect((await running.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);
  });
});
