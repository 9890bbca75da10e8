/** Every relative link in the README, CONTRIBUTING.md and docs/*.md leads to a file, and to a heading there. */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGES = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The text without fenced blocks and code spans, where `[x](y)` is not a link. */
function prose(md: string): string {
  return md.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '').replace(/(`+)[\s\S]*?\1/g, '');
}

/** GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
export function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of md.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '').matchAll(/^#{1,6} +(.+?) *$/gm)) {
    const base = m[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

describe('relative links in the documentation', () => {
  it('knows GitHub’s anchors', () => {
    expect([...anchors('# A `b` c\n## Where to add …\n## x\n## x\n```\n# not\n```\n')]).toEqual([
      'a-b-c',
      'where-to-add-',
      'x',
      'x-1',
    ]);
  });

  it.each(PAGES)('%s: every relative link resolves, with its anchor', (page) => {
    const text = readFileSync(join(ROOT, page), 'utf8');
    const broken: string[] = [];
    for (const m of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/i.test(target)) continue;
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const file = path === '' ? page : normalize(join(dirname(page), decodeURI(path)));
      if (!existsSync(join(ROOT, file))) {
        broken.push(`${target} (no file ${file})`);
        continue;
      }
      if (anchor !== undefined && file.endsWith('.md')) {
        if (!anchors(readFileSync(join(ROOT, file), 'utf8')).has(anchor))
          broken.push(`${target} (no heading #${anchor} in ${file})`);
      }
    }
    expect(broken).toEqual([]);
  });
});
