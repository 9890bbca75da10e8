/** Small statistics and reporting helpers for the benchmark scripts. */
import { readFileSync, writeFileSync } from 'node:fs';
import { projectPath } from './paths.ts';

export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

export const median = (values: readonly number[]): number => quantile(values, 0.5);

export function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Renders rows as a GitHub markdown table. */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly (string | number)[])[],
): string {
  const line = (cells: readonly (string | number)[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Replaces the text between `<!-- NAME -->` and `<!-- /NAME -->` in the README. */
export function replaceReadmeBlock(name: string, text: string): void {
  const file = projectPath('README.md');
  const readme = readFileSync(file, 'utf8');
  const start = `<!-- ${name} -->`;
  const end = `<!-- /${name} -->`;
  const a = readme.indexOf(start);
  const b = readme.indexOf(end);
  if (a < 0 || b < a) throw new Error(`README has no ${name} markers`);
  writeFileSync(file, `${readme.slice(0, a + start.length)}\n${text}\n${readme.slice(b)}`);
}
