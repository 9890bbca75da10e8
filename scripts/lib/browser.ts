/**
 * Drives the browser page in a real, headless Chromium (Debian's `chromium` package, through
 * puppeteer-core: no browser download), for the page's test and its screenshot.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

/** The little of the DOM the functions below run inside the page (the project builds without DOM types). */
declare const document: {
  getElementById(id: string): { textContent: string | null; className?: string } | null;
};

/** Where Chromium is: `CHROMIUM_PATH`, else Debian's and Ubuntu's usual places; undefined when none. */
export function findChromium(): string | undefined {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  return candidates.find((path): path is string => !!path && existsSync(path));
}

export interface HeadlessBrowser {
  readonly browser: Browser;
  close(): Promise<void>;
}

/**
 * Starts Chromium headless with a fresh profile. Its background services (updates, sync, safe
 * browsing lookups) are off: on a machine without internet they only fail, many times a second.
 * Audio may start without a gesture, since a headless browser has no user to make one.
 */
export async function launchChromium(executablePath: string): Promise<HeadlessBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'kokoro-chromium-'));
  const browser = await puppeteer.launch({
    executablePath,
    headless: true,
    userDataDir: profile,
    args: [
      '--no-sandbox', // CI runs as root, where Chromium's sandbox cannot start
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
  return {
    browser,
    async close() {
      await browser.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

export interface SpeakResult {
  /** The page's status line when it finished. */
  readonly status: string;
  /** The page's time-to-first-audio figure, as shown (`123 ms`). */
  readonly ttfa: string;
  readonly frames: number;
  /** Seconds of audio received, as shown. */
  readonly receivedS: number;
}

/** Opens the page and waits until it has loaded the voices. */
export async function openPage(browser: Browser, url: string): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewport({ width: 1060, height: 760 });
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(String(err)));
  await page.goto(url, { waitUntil: 'load' });
  await page
    .waitForFunction(() => document.getElementById('status')?.textContent === 'ready', { timeout: 30_000 })
    .catch((err: Error) => {
      throw new Error(
        `the page did not get ready: ${err.message}${problems.length ? `; ${problems.join('; ')}` : ''}`,
      );
    });
  return page;
}

/** Clicks Speak in a mode (`whole` or `pieces`) and waits for the page to say it is done. */
export async function speakOnPage(
  page: Page,
  options: { text?: string; mode?: 'whole' | 'pieces'; voice?: string; timeoutMs?: number } = {},
): Promise<SpeakResult> {
  if (options.text !== undefined) {
    await page.$eval(
      '#text',
      (el, text) => ((el as unknown as { value: string }).value = text),
      options.text,
    );
  }
  if (options.voice !== undefined) await page.select('#voice', options.voice);
  await page.click(`input[name="mode"][value="${options.mode ?? 'whole'}"]`);
  await page.click('#speak');
  // Done, stopped, or any error the page reports (the status's class says so): a session that
  // closed or never opened ends the wait with its reason instead of running out the time.
  await page.waitForFunction(
    () => {
      const status = document.getElementById('status');
      return /^(done|error|stopped)/.test(status?.textContent ?? '') || status?.className === 'error';
    },
    { timeout: options.timeoutMs ?? 30_000 },
  );
  return readMeters(page);
}

export async function readMeters(page: Page): Promise<SpeakResult> {
  return page.evaluate(() => {
    const text = (id: string) => document.getElementById(id)?.textContent ?? '';
    return {
      status: text('status'),
      ttfa: text('ttfa'),
      frames: Number(text('frames')),
      receivedS: Number.parseFloat(text('received')),
    };
  });
}
