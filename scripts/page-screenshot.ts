/**
 * A screenshot of the browser page while it plays: starts the server (the stand-in model unless
 * KOKORO_MODEL_DIR says otherwise), or uses `--url`, speaks a paragraph in headless Chromium, and
 * saves the page mid-playback.
 *
 * Usage: `npm run screenshot -- [--url URL] [--out FILE]` (default docs/img/page.png)
 */
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { UsageError, parseFlags, runMain } from './lib/cli.ts';
import { findChromium, launchChromium, openPage, speakOnPage } from './lib/browser.ts';
import { projectPath } from './lib/paths.ts';
import { startServerProcess, type ServerProcess } from './lib/server-process.ts';

const USAGE = 'Usage: npm run screenshot -- [--url URL] [--out FILE]   (default docs/img/page.png)';

const TEXT =
  'Hello! This is Kokoro, streaming from your own server. Each sentence is spoken the moment it is ready, so you hear the first words long before the last ones are synthesized.';

export async function main(argv: readonly string[]): Promise<number> {
  let flags;
  try {
    flags = parseFlags(argv, { url: { type: 'string' }, out: { type: 'string' }, help: { type: 'boolean' } });
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`error: ${err.message}\n${USAGE}`);
    return 2;
  }
  if (flags.help) {
    console.log(USAGE);
    return 0;
  }
  const chromium = findChromium();
  if (!chromium) {
    console.error('error: Chromium not found (set CHROMIUM_PATH, or: apt-get install chromium)');
    return 1;
  }
  const out = flags.out ?? projectPath('docs', 'img', 'page.png');
  let server: ServerProcess | undefined;
  if (!flags.url) {
    console.error('starting the server…');
    server = await startServerProcess({
      KOKORO_MODEL_DIR: process.env.KOKORO_MODEL_DIR ?? projectPath('test', 'fixtures', 'standin-model'),
      LOG_LEVEL: 'warn',
      WEB_PAGE: 'true',
    });
  }
  const browser = await launchChromium(chromium);
  try {
    const page = await openPage(browser.browser, `${flags.url ?? server!.http}/`);
    const result = await speakOnPage(page, { text: TEXT, mode: 'whole', voice: 'af_heart' });
    console.error(`${result.status}; time to first audio ${result.ttfa}, ${result.frames} frames`);
    // Mid-playback: the played part of the waveform and the level meter show.
    await new Promise((r) => setTimeout(r, 2500));
    await mkdir(dirname(out), { recursive: true });
    await page.screenshot({ path: out as `${string}.png`, fullPage: true });
    console.error(`saved ${out}`);
  } finally {
    await browser.close();
    await server?.stop();
  }
  return 0;
}

runMain(import.meta.url, 'page-screenshot', () => main(process.argv.slice(2)));
