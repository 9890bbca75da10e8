/**
 * The browser page in a real headless Chromium (Debian's package, driven by puppeteer-core): it
 * loads its voices, speaks a sentence over the WebSocket route and plays the PCM, shows its time to
 * first audio, types text in pieces with append/flush, and stops with cancel. Skipped, saying so,
 * where Chromium is not installed (`sh scripts/test-deps.sh` installs it).
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'puppeteer-core';
import {
  findChromium,
  launchChromium,
  openPage,
  readMeters,
  speakOnPage,
  type HeadlessBrowser,
} from '../../scripts/lib/browser.ts';
import { sharedServer, startServer, type TestServer } from './harness.ts';

const CHROMIUM = findChromium();
const SKIP = CHROMIUM ? '' : ' (skipped: Chromium not installed; sh scripts/test-deps.sh installs it)';

const SENTENCE = 'The page plays this sentence as it arrives.';

describe('the page’s files', () => {
  let server: TestServer;
  let off: TestServer;
  beforeAll(async () => {
    server = await sharedServer({ AUTH_TOKEN: 'page-secret' });
    off = await startServer({ WEB_PAGE: 'false' });
  });
  afterAll(async () => {
    await server.close();
    await off.close();
  });

  it('GET / serves the page without credentials, with a policy that allows only its own origin', async () => {
    const res = await fetch(`${server.http}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
    expect(await res.text()).toContain('<script type="module" src="/web/app.js">');
    const script = await fetch(`${server.http}/web/app.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await script.text()).toBe(await readFile(new URL('../../web/app.js', import.meta.url), 'utf8'));
  });

  it('what the page calls still needs the token', async () => {
    expect((await fetch(`${server.http}/v1/audio/voices`)).status).toBe(401);
    expect((await fetch(`${server.http}/web/missing.js`)).status).toBe(404);
  });

  it('WEB_PAGE=false turns the page off', async () => {
    expect((await fetch(`${off.http}/`)).status).toBe(404);
    expect((await fetch(`${off.http}/web/app.js`)).status).toBe(404);
  });
});

describe.skipIf(!CHROMIUM)(`the page in headless Chromium${SKIP}`, () => {
  let server: TestServer;
  let chromium: HeadlessBrowser;
  let page: Page;
  beforeAll(async () => {
    server = await sharedServer();
    chromium = await launchChromium(CHROMIUM!);
    page = await openPage(chromium.browser, `${server.http}/`);
  }, 60_000);
  afterAll(async () => {
    await chromium?.close();
    await server.close();
  });

  /** Seconds of 24 kHz PCM the server makes of a text with a voice. */
  async function expectedSeconds(text: string, voice: string): Promise<number> {
    const res = await fetch(`${server.http}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text, voice, format: 'pcm' }),
    });
    return (await res.arrayBuffer()).byteLength / 2 / 24_000;
  }

  it('fills the voice picker from /v1/audio/voices, the default voice selected', async () => {
    const voices = await page.$$eval('#voice option', (options) =>
      options.map((o) => (o as unknown as { value: string }).value),
    );
    expect(voices).toContain('af_heart');
    expect(voices).toContain('bm_george');
    expect(await page.$eval('#voice', (el) => (el as unknown as { value: string }).value)).toBe(
      server.config.defaultVoice,
    );
  });

  it('Speak: audio frames arrive over the WebSocket, and the page shows its time to first audio', async () => {
    const result = await speakOnPage(page, { text: SENTENCE, mode: 'whole', voice: 'af_bella' });
    expect(result.status).toMatch(/^done/);
    expect(result.frames).toBeGreaterThan(0);
    expect(result.ttfa).toMatch(/^\d+ ms$/);
    // Every sample of the sentence reached the page (its meter shows two decimals).
    expect(Math.abs(result.receivedS - (await expectedSeconds(SENTENCE, 'af_bella')))).toBeLessThanOrEqual(
      0.005,
    );
    // The waveform has been drawn.
    const drawn = await page.$eval('#wave', (canvas) => {
      const c = canvas as unknown as {
        width: number;
        height: number;
        getContext(k: '2d'): {
          getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
        };
      };
      const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
      let blue = 0;
      for (let i = 0; i < data.length; i += 4) if (data[i + 2]! > data[i]! + 40) blue++;
      return blue;
    });
    expect(drawn).toBeGreaterThan(0);
  });

  it('typed in pieces: the text goes out as appends and a flush, and all of it is spoken', async () => {
    const text = 'Streaming input, piece by piece. The server speaks each sentence once it is complete.';
    const result = await speakOnPage(page, { text, mode: 'pieces', voice: 'af_heart' });
    expect(result.status).toMatch(/^done/);
    expect(await page.$eval('#typed', (el) => el.textContent)).toBe(text);
    expect(Math.abs(result.receivedS - (await expectedSeconds(text, 'af_heart')))).toBeLessThanOrEqual(0.005);
  });

  it('Insert pause puts a pause at the cursor, and the pronunciations field reads its words: both spoken', async () => {
    await page.$eval('#text', (el) => {
      const area = el as unknown as { value: string; selectionStart: number; selectionEnd: number };
      area.value = 'Hello there. How is Nginx?';
      area.selectionStart = area.selectionEnd = 'Hello there.'.length;
    });
    await page.select('#pause-length', '1s');
    await page.click('#pause');
    const text = await page.$eval('#text', (el) => (el as unknown as { value: string }).value);
    expect(text).toBe('Hello there. [pause:1s] How is Nginx?');
    await page.$eval(
      '#pronunciations',
      (el) => ((el as unknown as { value: string }).value = 'SQL = sequel'),
    );
    const result = await speakOnPage(page, { mode: 'whole', voice: 'af_heart' });
    await page.$eval('#pronunciations', (el) => ((el as unknown as { value: string }).value = ''));
    expect(result.status).toMatch(/^done/);
    const spoken = (await expectedSeconds('Hello there. How is engine x?', 'af_heart')) + 1;
    expect(Math.abs(result.receivedS - spoken)).toBeLessThanOrEqual(0.005);
  });

  it('Stop sends cancel: the server cuts the speech, and the session speaks again after', async () => {
    const long = Array.from(
      { length: 30 },
      (_, i) => `This is sentence number ${i + 1} of a long answer.`,
    ).join(' ');
    await page.$eval('#text', (el, t) => ((el as unknown as { value: string }).value = t), long);
    await page.click('input[name="mode"][value="pieces"]');
    await page.click('#speak');
    await page.waitForFunction(() => Number(document.getElementById('frames')?.textContent) > 0, {
      timeout: 30_000,
    });
    await page.click('#stop');
    await page.waitForFunction(() => /^stopped/.test(document.getElementById('status')?.textContent ?? ''), {
      timeout: 30_000,
    });
    const stopped = await readMeters(page);
    expect(stopped.receivedS).toBeLessThan(await expectedSeconds(long, 'af_heart'));

    const again = await speakOnPage(page, { text: SENTENCE, mode: 'whole' });
    expect(again.status).toMatch(/^done/);
    expect(again.frames).toBeGreaterThan(0);
  });

  it('with AUTH_TOKEN: the page asks for the token, then loads the voices and speaks with it', async () => {
    const guarded = await sharedServer({ AUTH_TOKEN: 'page-secret' });
    const tab = await chromium.browser.newPage();
    try {
      await tab.goto(`${guarded.http}/`, { waitUntil: 'load' });
      await tab.waitForFunction(() => /API token/.test(document.getElementById('status')?.textContent ?? ''));
      expect(await tab.$eval('#token-row', (el) => (el as unknown as { hidden: boolean }).hidden)).toBe(
        false,
      );
      await tab.type('#token', 'page-secret');
      await tab.$eval('#token', (el) => el.dispatchEvent(new Event('change')));
      await tab.waitForFunction(
        () => (document.getElementById('voice') as unknown as { length: number }).length > 0,
      );
      const result = await speakOnPage(tab, { text: SENTENCE, mode: 'whole' });
      expect(result.status).toMatch(/^done/);
      expect(result.frames).toBeGreaterThan(0);
    } finally {
      await tab.close();
    }
  });
});

declare const document: { getElementById(id: string): { textContent: string | null } | null };
