/**
 * Smoke test for a running server (see scripts/lib/smoke-session.ts for what it checks).
 *
 * Usage: `npm run smoke -- [--url URL] [--voice ID] [--out DIR] [--text "..."]... [--timeout-ms N]`
 */
import { runMain } from './lib/cli.ts';
import {
  USAGE,
  deriveEndpoints,
  parseCliArgs,
  type Endpoints,
  type SmokeOptions,
} from './lib/smoke-checks.ts';
import { runSmoke } from './lib/smoke-session.ts';

export async function main(argv: readonly string[]): Promise<number> {
  let options: SmokeOptions;
  let endpoints: Endpoints;
  try {
    options = parseCliArgs(argv);
    if (options.help) {
      console.log(USAGE);
      return 0;
    }
    endpoints = deriveEndpoints(options.url);
  } catch (err) {
    console.error(`error: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }

  return runSmoke(options, endpoints);
}

runMain(import.meta.url, 'smoke', () => main(process.argv.slice(2)));
