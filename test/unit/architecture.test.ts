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
  it('no source file is over 600 lines', () => {
    const files = ['protocol', 'model', 'server', 'packages/client/src', 'scripts'].flatMap(sources);
    expect(files.length).toBeGreaterThan(100);
    const long = files
      .map((file) => ({ file, lines: readFileSync(join(ROOT, file), 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > 600)
      .map(({ file, lines }) => `${file}: ${lines}`);
    expect(long).toEqual([]);
  });

  it('a dialect is its folder under server/dialects/ and one entry of the registry', () => {
    const folders = readdirSync(join(ROOT, 'server/dialects'), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => `server/dialects/${e.name}/`);
    expect(folders.length).toBeGreaterThanOrEqual(5);
    const registry = imports('server/dialects/registry.ts');
    expect(folders.filter((f) => !registry.includes(`${f}index.ts`))).toEqual([]);
    // Nothing else reaches into a dialect's folder: not the server around it, not another dialect.
    // The native dialect is the exception: the session's default, and the base others may extend.
    const reaching = sources('server').flatMap((file) =>
      imports(file)
        .filter((target) => {
          const folder = folders.find((f) => target.startsWith(f));
          if (folder === undefined || folder === 'server/dialects/native/') return false;
          return !file.startsWith(folder) && file !== 'server/dialects/registry.ts';
        })
        .map((target) => `${file} → ${target}`),
    );
    expect(reaching).toEqual([]);
  });

  it('a language is its module under model/text/languages/ and one line of the list', () => {
    const dir = 'model/text/languages/';
    const shared = ['index.ts', 'language.ts', 'registry.ts', 'espeak-language.ts'].map((f) => dir + f);
    const modules = sources(dir).filter((f) => !shared.includes(f));
    expect(modules.length).toBeGreaterThanOrEqual(8);
    const list = imports(`${dir}index.ts`);
    expect(modules.filter((m) => !list.includes(m))).toEqual([]);
    // Only the list imports a language's module (English's front-end switches excepted: the
    // phonemizer re-exports them for the worker).
    const reaching = ['model', 'server', 'scripts'].flatMap(sources).flatMap((file) =>
      imports(file)
        .filter((t) => modules.includes(t) && file !== `${dir}index.ts` && !file.startsWith(dir))
        .filter((t) => !(file === 'model/text/phonemes.ts' && t === `${dir}english.ts`))
        .map((t) => `${file} → ${t}`),
    );
    expect(reaching).toEqual([]);
  });
});
