/* global console, process */
/**
 * Removes from a production node_modules what the server never loads (run after
 * `npm prune --omit=dev` in the image build):
 *   1. packages no runtime import can reach. The walk starts at the app's own dependencies and
 *      follows each package's dependencies, optional dependencies and required peers, except:
 *      kokoro-js's (only its voices/ folder is used: model/kokoro/voices.ts finds it through the
 *      package, whose JavaScript is never imported, so @huggingface/transformers, onnxruntime-web,
 *      sharp, phonemizer and theirs are dead weight) and the workspace packages (the client, which
 *      only scripts and users import; its optional AWS SDK peer goes with it);
 *   2. onnxruntime-node's native binaries for other platforms and architectures, and its TensorRT
 *      provider, which needs TensorRT (not in the image; only CUDA is used);
 *   3. files no package loads at run time: kuromoji's tests and demo (23 MB), kokoro-js's browser
 *      bundle and types, jieba-wasm's builds for bundlers, Deno and browsers, and everywhere source
 *      maps, TypeScript declarations and Markdown other than licences; node_modules/.bin.
 * Fails, before removing anything, when a file the server needs is missing.
 *
 *   node prune-modules.mjs NODE_MODULES_DIR
 */
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';

const modules = process.argv[2];
if (!modules) fail('usage: node prune-modules.mjs NODE_MODULES_DIR');
const appDir = dirname(modules);
const platform = `${process.platform}/${process.arch}`;
const ort = join(modules, 'onnxruntime-node/bin/napi-v6');

/** Packages whose dependencies are not followed: what the server uses of them needs none. */
const NOT_FOLLOWED = new Set(['kokoro-js']);
/** Folders and files inside packages that nothing loads. */
const DEAD_PATHS = [
  'kuromoji/test',
  'kuromoji/demo',
  'kokoro-js/dist/kokoro.web.js',
  'kokoro-js/types',
  'jieba-wasm/pkg/bundler',
  'jieba-wasm/pkg/deno',
  'jieba-wasm/pkg/web',
  '.bin',
];
/** What the server loads from the packages whose other files go. */
const NEEDED = ['kokoro-js/voices', 'kokoro-js/dist/kokoro.cjs', 'kuromoji/src', 'kuromoji/dict'];
const DEAD_FILE = /\.(map|d\.ts|d\.mts|d\.cts|md|markdown)$/i;
const LICENCE = /^(licen[cs]e|copying|notice|authors)/i;

function fail(message) {
  console.error(`prune-modules: ${message}`);
  process.exit(1);
}

const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));

/** Every package folder under `dir` (a node_modules), nested ones included; links are not followed. */
function packageDirs(dir) {
  const found = [];
  for (const entry of existsSync(dir) ? readdirSync(dir) : []) {
    if (entry.startsWith('.')) continue;
    const path = join(dir, entry);
    if (entry.startsWith('@')) {
      for (const scoped of readdirSync(path)) found.push(join(path, scoped));
    } else {
      found.push(path);
    }
  }
  return found.flatMap((path) =>
    lstatSync(path).isDirectory() ? [path, ...packageDirs(join(path, 'node_modules'))] : [path],
  );
}

/** Where Node finds package `name` from package folder `from`: the nearest node_modules above. */
function resolvePackage(from, name) {
  for (let dir = from; ; dir = dirname(dir)) {
    if (basename(dir) === 'node_modules') continue;
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === appDir || dirname(dir) === dir) return undefined;
  }
}

/** The package folders reachable from the app's dependencies. */
function reachable() {
  const app = readJson(join(appDir, 'package.json'));
  const workspaces = new Set(
    packageDirs(modules)
      .filter((path) => lstatSync(path).isSymbolicLink())
      .map((path) => relative(modules, path)),
  );
  const keep = new Set();
  const queue = [appDir];
  while (queue.length > 0) {
    const dir = queue.pop();
    const pkg = dir === appDir ? app : readJson(join(dir, 'package.json'));
    // The name it is installed under: `…/node_modules/@scope/name` is @scope/name.
    const name = dir.slice(dir.lastIndexOf('node_modules/') + 'node_modules/'.length);
    if (dir !== appDir && NOT_FOLLOWED.has(name)) continue;
    const names = new Set([
      ...Object.keys(pkg.dependencies ?? {}),
      ...Object.keys(pkg.optionalDependencies ?? {}),
      ...Object.keys(pkg.peerDependencies ?? {}).filter(
        (name) => !pkg.peerDependenciesMeta?.[name]?.optional,
      ),
    ]);
    for (const name of names) {
      if (workspaces.has(name)) continue;
      const found = resolvePackage(dir, name);
      if (found !== undefined && !keep.has(found)) {
        keep.add(found);
        queue.push(found);
      }
    }
  }
  return keep;
}

/** Files under `dir` matching DEAD_FILE, licences excepted. */
function deadFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return deadFiles(path);
    return entry.isFile() && DEAD_FILE.test(entry.name) && !LICENCE.test(entry.name) ? [path] : [];
  });
}

// Checks first: nothing is removed from a tree that lacks what the server needs.
if (!existsSync(join(ort, platform))) fail(`onnxruntime-node has no binaries for ${platform}`);
for (const path of NEEDED) {
  if (!existsSync(join(modules, path))) fail(`${path} is missing; the server needs it`);
}

const keep = reachable();
const unreachable = packageDirs(modules).filter(
  (path) => !keep.has(path) && ![...keep].some((kept) => kept.startsWith(`${path}/node_modules/`)),
);
const removed = [
  ...unreachable,
  ...readdirSync(ort).flatMap((os) =>
    readdirSync(join(ort, os))
      .map((arch) => join(ort, os, arch))
      .filter((dir) => relative(ort, dir) !== platform),
  ),
  join(ort, platform, 'libonnxruntime_providers_tensorrt.so'),
  ...DEAD_PATHS.map((path) => join(modules, path)),
];
for (const path of removed) rmSync(path, { recursive: true, force: true });
for (const os of readdirSync(ort)) {
  if (readdirSync(join(ort, os)).length === 0) rmSync(join(ort, os), { recursive: true });
}
const files = deadFiles(modules);
for (const file of files) rmSync(file);
// Scope folders left empty.
for (const entry of readdirSync(modules)) {
  const path = join(modules, entry);
  if (entry.startsWith('@') && readdirSync(path).length === 0) rmSync(path, { recursive: true });
}

console.log(
  `prune-modules: removed ${unreachable.length} unreachable packages` +
    (unreachable.length > 0 ? ` (${unreachable.map((p) => relative(modules, p)).join(', ')})` : '') +
    `, ${files.length} maps, declarations and documents`,
);
console.log(`prune-modules: kept onnxruntime-node's binaries for ${platform}:`);
for (const file of readdirSync(join(ort, platform))) console.log(`  ${file}`);
