/**
 * The browser page: `GET /` and its files under `/web/`, read once from the project's `web/`
 * folder at start and served from memory. Static files with no build step; off with
 * `WEB_PAGE=false` (the production images), and then `/` is an ordinary 404.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync } from 'fastify';

/** The page's folder: `web/` at the project root, beside `dist/`. */
export const WEB_DIR = fileURLToPath(new URL('../../../web/', import.meta.url));

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * Only the page's own origin: scripts, styles, the WebSocket and the API; audio from blobs the page
 * makes. The page runs no inline script.
 */
const CSP = [
  "default-src 'self'",
  "connect-src 'self' ws: wss:",
  "media-src 'self' blob:",
  "img-src 'self' data:",
  "frame-ancestors 'none'",
].join('; ');

interface PageFile {
  readonly type: string;
  readonly body: Buffer;
}

/** The files of `web/` (one level, known types only), keyed by URL path. */
function loadPage(dir: string): Map<string, PageFile> {
  const files = new Map<string, PageFile>();
  for (const name of readdirSync(dir)) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const body = readFileSync(`${dir}${name}`);
    files.set(name === 'index.html' ? '/' : `/web/${name}`, { type, body });
  }
  if (!files.has('/')) throw new Error(`The browser page has no index.html in ${dir}`);
  return files;
}

/** Paths of the page, which need no credentials (it holds none; what it calls does). */
export function isPagePath(path: string): boolean {
  return path === '/' || path.startsWith('/web/');
}

export const pageRoutes: FastifyPluginAsync<{ dir?: string }> = async (app, { dir = WEB_DIR }) => {
  const files = loadPage(dir);
  for (const [path, file] of files) {
    app.get(path, { logLevel: 'warn' }, async (_request, reply) =>
      reply
        .type(file.type)
        .header('cache-control', 'no-cache')
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', CSP)
        .send(file.body),
    );
  }
};
