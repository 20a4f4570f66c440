/**
 * The web console (docs/console.md): the single-page app built from `src/console-ui/` into `dist/console` by
 * `npm run build`, served at `/console` on the gateway's own port. It has no API of its own: the browser calls
 * `/api/v1` with the management key the user signs in with. `GATEWAY_CONSOLE=off` leaves these routes out.
 *
 * The built files are read once at start-up (a few hundred kB) and kept in memory with their gzip form. Hashed
 * assets (`/console/assets/*`) are cached for a year; `index.html` is revalidated on every load; any other path under
 * `/console` that names no file is a deep link and gets `index.html` (the app's router reads the URL).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from './plugins/errors.js';

export const CONSOLE_PREFIX = '/console';

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  ico: 'image/x-icon',
  json: 'application/json; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
  woff2: 'font/woff2',
};
const COMPRESSIBLE = new Set(['html', 'js', 'css', 'svg', 'json', 'txt']);

/** Same origin only, no inline script; inline style attributes are allowed (the chart library sets them). */
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer | null;
  immutable: boolean;
}

/** Where the built console is: next to the compiled server (dist/http → dist/console), or dist/ when run from src/. */
export function consoleDir(): string | null {
  const candidates = [fileURLToPath(new URL('../console/', import.meta.url)), fileURLToPath(new URL('../../dist/console/', import.meta.url))];
  return candidates.find((d) => existsSync(join(d, 'index.html'))) ?? null;
}

function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      if (statSync(full).isDirectory()) {
        walk(full);
        continue;
      }
      const rel = relative(dir, full).split(sep).join('/');
      const ext = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
      const body = readFileSync(full);
      const gzip = COMPRESSIBLE.has(ext) && body.length > 1024 ? gzipSync(body, { level: 9 }) : null;
      assets.set(rel, { type: TYPES[ext] ?? 'application/octet-stream', body, gzip, immutable: rel.startsWith('assets/') });
    }
  };
  walk(dir);
  return assets;
}

function send(request: FastifyRequest, reply: FastifyReply, a: Asset) {
  reply.headers(SECURITY_HEADERS);
  reply.header('content-type', a.type);
  reply.header('cache-control', a.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  reply.header('vary', 'accept-encoding');
  const accepts = String(request.headers['accept-encoding'] ?? '');
  if (a.gzip && /\bgzip\b/.test(accepts)) {
    reply.header('content-encoding', 'gzip');
    return reply.send(a.gzip);
  }
  return reply.send(a.body);
}

/** Registers `/console` and `/console/*` (hidden from the OpenAPI document: they are not part of the API). */
export async function registerConsole(app: FastifyInstance, opts: { dir?: string | null } = {}): Promise<void> {
  const dir = opts.dir === undefined ? consoleDir() : opts.dir;
  const assets = dir ? loadAssets(dir) : new Map<string, Asset>();
  const index = assets.get('index.html');
  if (!index) app.log.warn('the console is not built (npm run build makes dist/console); /console answers 404');

  const handler = async (request: FastifyRequest<{ Params: { '*'?: string } }>, reply: FastifyReply) => {
    if (!index) return sendError(reply, 404, 'The console is not built on this gateway (npm run build makes dist/console)');
    const path = (request.params['*'] ?? '').replace(/^\/+/, '');
    const asset = path ? assets.get(path) : undefined;
    if (asset) return send(request, reply, asset);
    // A missing hashed asset or a file-like path is a real 404 (a stale page asking for an old bundle); any other
    // path is one of the app's pages.
    if (path.startsWith('assets/') || /\.[a-z0-9]{1,5}$/i.test(path)) return sendError(reply, 404, `No console file ${path}`);
    return send(request, reply, index);
  };
  const route = { schema: { hide: true }, config: { auth: 'none' as const, rateLimit: false } };
  app.get(CONSOLE_PREFIX, route, handler);
  app.get(`${CONSOLE_PREFIX}/*`, route, handler);
}
