/** Keeps the README's configuration table in step with the code (the error table lives in docs/protocol.md). */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configTable } from '../../scripts/lib/config-doc.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('holds the configuration table that `npm run docs:config` writes from server/config/settings.ts', () => {
    const block = /<!-- config -->\n([\s\S]*?)\n<!-- \/config -->/.exec(readme)?.[1];
    expect(block, 'README.md has no <!-- config --> … <!-- /config --> block').toBeDefined();
    expect(block, "the README's configuration table is stale: run `npm run docs:config`").toBe(configTable());
  });

  it('gives two quick-start commands first, whose scripts and paths exist (.ci/run runs both)', () => {
    const block = /## Quick start[^\n]*\n\n```sh\n([^`]+)```/.exec(readme)?.[1]?.trim().split('\n') ?? [];
    expect(block).toHaveLength(2);
    const scripts = (
      JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    const named = block.flatMap((c) =>
      [...c.matchAll(/npm (?:run )?(start|test|[\w:-]+)/g)].map((m) => m[1]!),
    );
    expect(named.filter((n) => n !== 'ci' && scripts[n] === undefined)).toEqual([]);
    const paths = block.flatMap((c) =>
      [...c.matchAll(/(?:^|[\s=])((?:test|scripts)\/[\w./-]+)/g)].map((m) => m[1]!),
    );
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.filter((p) => !existsSync(new URL(`../../${p}`, import.meta.url)))).toEqual([]);
    // CI runs exactly these two lines, so a command that stops working turns CI red.
    const ci = readFileSync(new URL('../../.ci/run', import.meta.url), 'utf8');
    expect(ci).toContain('quick_start');
  });
});
