/** The documentation's generated blocks, written from one place: benchmark tables and the settings table. */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { projectPath } from './paths.ts';
import { replaceBlock } from './stats.ts';

/** The pages that may hold generated blocks: the Markdown files directly under docs/. */
function docPages(): string[] {
  return readdirSync(projectPath('docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
}

/** The pages (paths from the project root) that hold `<!-- NAME -->`. */
export function pagesWithBlock(name: string, pages: readonly string[] = docPages()): string[] {
  return pages.filter((p) => readFileSync(projectPath(p), 'utf8').includes(`<!-- ${name} -->`));
}

/**
 * Replaces what lies between `<!-- NAME -->` and `<!-- /NAME -->` with `body`, in the one page under
 * docs/ that holds those markers (docs/configuration.md for the settings, docs/performance.md or the
 * page beside the prose the figures belong to for a benchmark).
 * @throws Error when no page or more than one holds the markers.
 */
export function writeDocBlock(name: string, body: string): string {
  const pages = pagesWithBlock(name);
  if (pages.length !== 1)
    throw new Error(
      pages.length === 0
        ? `no page under docs/ holds <!-- ${name} -->`
        : `<!-- ${name} --> is in more than one page: ${pages.join(', ')}`,
    );
  const page = projectPath(pages[0]!);
  writeFileSync(page, replaceBlock(readFileSync(page, 'utf8'), name, body));
  return pages[0]!;
}
