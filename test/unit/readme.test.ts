/** Keeps the README's error table and configuration table in step with the code. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../server/errors.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('lists exactly the error codes the server can send, with their HTTP status', () => {
    const rows = [...readme.matchAll(/^\| `([a-z0-9_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]);
    const codes = Object.values(ERROR_CODES).map((e) => [e.code, e.status]);
    expect(rows.sort()).toEqual(codes.sort());
  });

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
