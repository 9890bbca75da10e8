/** Keeps the README's configuration table in step with the code (the error table lives in docs/protocol.md). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('documents every environment variable the config reads', () => {
    const source = readFileSync(new URL('../../server/config.ts', import.meta.url), 'utf8');
    const read = new Set(
      [...source.matchAll(/(?:env\.|int\(|oneOf(?:<\w+>)?\(|bool\()'?([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]),
    );
    expect(read.size).toBeGreaterThan(10);
    for (const name of read) expect(readme).toContain(`\`${name}\``);
  });

  it('gives the two quick-start commands first', () => {
    const block = /## Quick start[^\n]*\n\n```sh\n([^`]+)```/.exec(readme)?.[1]?.trim().split('\n');
    expect(block).toEqual([
      'npm ci && KOKORO_MODEL_DIR=test/fixtures/standin-model npm start',
      'sh scripts/test-deps.sh && npm ci && npm test',
    ]);
  });
});
