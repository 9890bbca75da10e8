// An ESLint rule: no import cycles between the project's modules, type-only imports included (a
// cycle of types still ties two modules' designs together). Each file's relative imports are
// followed on disk; an import that leads back to the importing file is reported with the cycle.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';

const SPECIFIERS = [
  /\b(?:import|export)\s[^'";]*?\bfrom\s*['"](\.[^'"]+)['"]/g,
  /\bimport\s*\(\s*['"](\.[^'"]+)['"]\s*\)/g,
  /\bimport\s+['"](\.[^'"]+)['"]/g,
];

/** file → the project files it imports (relative specifiers that exist on disk). */
const graph = new Map();

function importsOf(file) {
  let targets = graph.get(file);
  if (targets) return targets;
  targets = [];
  graph.set(file, targets);
  let source = '';
  try {
    source = readFileSync(file, 'utf8');
  } catch {
    return targets;
  }
  for (const pattern of SPECIFIERS) {
    for (const match of source.matchAll(pattern)) {
      const target = resolve(dirname(file), match[1]);
      if (/\.(ts|js|mjs)$/.test(target) && existsSync(target)) targets.push(target);
    }
  }
  return targets;
}

/** A path of imports from `start` back to `goal`, or undefined. */
function pathBack(start, goal) {
  const seen = new Set();
  const stack = [[start, [start]]];
  while (stack.length > 0) {
    const [file, path] = stack.pop();
    if (file === goal) return path;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const next of importsOf(file)) stack.push([next, [...path, next]]);
  }
  return undefined;
}

export default {
  meta: {
    type: 'problem',
    docs: { description: 'disallow import cycles between project modules, type-only imports included' },
    schema: [],
    messages: { cycle: 'Import cycle: {{cycle}}' },
  },
  create(context) {
    const file = context.filename;
    const check = (node, specifier) => {
      if (typeof specifier !== 'string' || !specifier.startsWith('.')) return;
      const target = resolve(dirname(file), specifier);
      const path = pathBack(target, file);
      if (!path) return;
      const cycle = [file, ...path].map((f) => relative(context.cwd, f)).join(' → ');
      context.report({ node, messageId: 'cycle', data: { cycle } });
    };
    return {
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
    };
  },
};
