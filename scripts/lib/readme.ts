/** The README's generated blocks, written from one place: benchmark tables and the settings table. */
import { readFileSync, writeFileSync } from 'node:fs';
import { projectPath } from './paths.ts';
import { replaceBlock } from './stats.ts';

/** Replaces what lies between `<!-- NAME -->` and `<!-- /NAME -->` in README.md with `body`. */
export function writeReadmeBlock(name: string, body: string): void {
  const readme = projectPath('README.md');
  writeFileSync(readme, replaceBlock(readFileSync(readme, 'utf8'), name, body));
}
