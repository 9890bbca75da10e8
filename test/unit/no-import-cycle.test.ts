/** The lint rule that rejects import cycles (scripts/lint/no-import-cycle.js), on files on disk. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { afterAll, describe, expect, it } from 'vitest';
import noImportCycle from '../../scripts/lint/no-import-cycle.js';

const dir = mkdtempSync(join(tmpdir(), 'no-import-cycle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function lint(files: Record<string, string>): Promise<string[]> {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const eslint = new ESLint({
    cwd: dir,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser },
        plugins: { project: { rules: { 'no-import-cycle': noImportCycle } } },
        rules: { 'project/no-import-cycle': 'error' },
      },
    ],
  });
  const results = await eslint.lintFiles(Object.keys(files).map((f) => join(dir, f)));
  return results.flatMap((r) => r.messages.map((m) => m.message));
}

describe('no-import-cycle', () => {
  it('reports a cycle of type-only imports, naming every module on it', async () => {
    const messages = await lint({
      'a.ts': "import type { B } from './b.ts';\nexport type A = { b?: B };\n",
      'b.ts': "import type { C } from './c.ts';\nexport type B = { c?: C };\n",
      'c.ts': "import type { A } from './a.ts';\nexport type C = { a?: A };\n",
    });
    expect(messages).toContain('Import cycle: a.ts → b.ts → c.ts → a.ts');
    expect(messages).toHaveLength(3);
  });

  it('reports cycles through re-exports and dynamic imports, and accepts a tree', async () => {
    expect(
      await lint({
        'd.ts': "export { e } from './e.ts';\nexport const d = 1;\n",
        'e.ts': "export const e = async () => (await import('./d.ts')).d;\n",
      }),
    ).toEqual(['Import cycle: d.ts → e.ts → d.ts', 'Import cycle: e.ts → d.ts → e.ts']);
    expect(
      await lint({
        'top.ts':
          "import { mid } from './mid.ts';\nimport { leaf } from './leaf.ts';\nexport const top = [mid, leaf];\n",
        'mid.ts': "import { leaf } from './leaf.ts';\nexport const mid = leaf;\n",
        'leaf.ts': 'export const leaf = 1;\n',
      }),
    ).toEqual([]);
  });
});
