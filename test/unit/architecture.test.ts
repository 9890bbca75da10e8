/**
 * The layers of docs/architecture.md, checked on the tree: each folder imports only what its row of
 * the table allows (so server/ sees model/ only through engine.ts), and every folder the document
 * names exists.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every .ts file below `dir` (relative to the root), declaration files left out. */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

/** The project files a source file imports (relative specifiers), relative to the root. */
function imports(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(/\bfrom\s+'(\.[^']+)'|\bimport\(\s*'(\.[^']+)'\s*\)/g)].map((m) =>
    relative(ROOT, resolve(dirname(join(ROOT, file)), (m[1] ?? m[2])!)),
  );
}

/** Folder → the paths its files may import (prefixes), besides the folder itself. */
const ALLOWED: Record<string, readonly string[]> = {
  'protocol/': [],
  'model/text/': ['model/kokoro/', 'protocol/'],
  'model/kokoro/': ['protocol/'],
  'model/inference/': ['model/text/', 'model/kokoro/', 'model/audio/pcm.ts', 'model/threads.ts', 'protocol/'],
  'model/synthesis/': ['model/inference/', 'model/text/', 'model/kokoro/', 'model/audio/', 'protocol/'],
  'model/audio/': ['model/kokoro/', 'model/threads.ts', 'protocol/'],
  'server/': ['model/engine.ts', 'protocol/'],
  'packages/client/src/': ['protocol/', 'model/text/sentences.ts'],
};

describe('architecture', () => {
  it.each(Object.entries(ALLOWED))('%s imports only what docs/architecture.md allows', (folder, allowed) => {
    const files = sources(folder);
    expect(files.length).toBeGreaterThan(0);
    const outside = files.flatMap((file) =>
      imports(file)
        .filter((target) => !target.startsWith(folder) && !allowed.some((a) => target.startsWith(a)))
        .map((target) => `${file} → ${target}`),
    );
    expect(outside).toEqual([]);
  });

  it('scripts/ reach the client by its package name only, so they run on its build', () => {
    const inside = sources('scripts').flatMap((file) =>
      imports(file)
        .filter((target) => target.startsWith('packages/'))
        .map((target) => `${file} → ${target}`),
    );
    expect(inside).toEqual([]);
  });

  it('names only folders and files that exist', () => {
    const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    const named = [
      ...doc.matchAll(/`((?:protocol|model|server|packages|scripts|docker|test)\/[\w./-]*)`/g),
    ].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((p) => !existsSync(join(ROOT, p)))).toEqual([]);
  });
});
