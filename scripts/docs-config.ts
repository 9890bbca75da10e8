/**
 * Writes the README's configuration table (between the `<!-- config -->` markers) from the
 * settings table, server/config/settings.ts. A unit test fails while the two differ.
 *
 * Usage: npm run docs:config
 */
import { runMain } from './lib/cli.ts';
import { configTable } from './lib/config-doc.ts';
import { writeReadmeBlock } from './lib/readme.ts';

runMain(import.meta.url, 'docs-config', () => {
  writeReadmeBlock('config', configTable());
  return Promise.resolve(0);
});
