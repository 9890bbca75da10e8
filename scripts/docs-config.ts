/**
 * Writes the configuration table of docs/configuration.md (between the `<!-- config -->` markers)
 * from the settings table, server/config/settings.ts. A unit test fails while the two differ.
 *
 * Usage: npm run docs:config
 */
import { runMain } from './lib/cli.ts';
import { configTable } from './lib/config-doc.ts';
import { writeDocBlock } from './lib/doc-blocks.ts';

runMain(import.meta.url, 'docs-config', () => {
  writeDocBlock('config', configTable());
  return Promise.resolve(0);
});
