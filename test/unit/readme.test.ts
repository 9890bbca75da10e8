/**
 * Keeps the README's quick start and the configuration page in step with the code (the error table
 * lives in docs/protocol.md, the benchmark blocks' markers are checked with the runner).
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configTable } from '../../scripts/lib/config-doc.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const configuration = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');

describe('docs/configuration.md', () => {
  it('holds the configuration table that `npm run docs:config` writes from server/config/settings.ts', () => {
    const block = /<!-- config -->\n([\s\S]*?)\n<!-- \/config -->/.exec(configuration)?.[1];
    expect(block, 'docs/configuration.md has no <!-- config --> … <!-- /config --> block').toBeDefined();
    expect(block, 'the configuration table is stale: run `npm run docs:config`').toBe(configTable());
  });

  it('is the only page with the table', () => {
    expect(readme).not.toContain('<!-- config -->');
  });
});

describe('README', () => {
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

  it('is a front door: at most 300 lines, the two commands on its first screen', () => {
    const lines = readme.split('\n');
    expect(lines.length).toBeLessThanOrEqual(300);
    const first = lines.slice(0, 20).join('\n');
    expect(first).toContain('## Quick start');
    expect(first).toMatch(/```sh\n.*npm start\n.*npm test\n```/);
  });
});
