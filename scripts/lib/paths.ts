/** Where the project is, whether a script runs from scripts/ or compiled from dist/scripts/. */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest folder above this file that holds the project's package.json. */
function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  return dir;
}

export const PROJECT_ROOT = findRoot();

/** A path inside the project, e.g. `projectPath('README.md')`. */
export function projectPath(...parts: string[]): string {
  return join(PROJECT_ROOT, ...parts);
}
