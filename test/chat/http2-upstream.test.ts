/**
 * An HTTP/2 provider (`http2: true`): concurrent requests share one session instead of taking turns. undici sends a
 * non-idempotent request over HTTP/2 only when its session has nothing else in flight; the gateway marks its POSTs
 * idempotent on HTTP/2 pools (it never lets undici retry them) so that a session carries them together.
 * The server's certificate is a self-signed test fixture (test/chat/fixtures), trusted for this file only.
 */
import http2 from 'node:http2';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cancellation, UpstreamHttp } from '../../src/providers/http.js';

const fixtures = join(import.meta.dirname, 'fixtures');
const TIMEOUTS = { connectMs: 5_000, firstByteMs: 10_000, idleMs: 10_000, totalMs: 20_000 };

describe('HTTP/2 upstream', () => {
  let server: http2.Http2SecureServer;
  let url: URL;
  let sessions = 0;
  let inFlight = 0;
  let peak = 0;
  const previous = process.env.NODE_TLS_REJECT_UNAUTHORIZED;

  beforeAll(async () => {
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
    server = http2.createSecureServer({ key: readFileSync(join(fixtures, 'h2-test-key.pem')), cert: readFileSync(join(fixtures, 'h2-test-cert.pem')) }, (req, res) => {
      if (req.url.endsWith('/echo')) {
        const parts: Buffer[] = [];
        req.on('data', (d: Buffer) => parts.push(d));
        req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(Buffer.concat(parts)));
        return;
      }
      inFlight++;
      peak = Math.max(peak, inFlight);
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          inFlight--;
          res.writeHead(200, { 'content-type': 'application/json' }).end(`{"version":"${req.httpVersion}"}`);
        }, 200),
      );
    });
    server.on('session', () => sessions++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = new URL(`https://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`);
  });
  afterAll(async () => {
    if (previous === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    else process.env.NODE_TLS_REJECT_UNAUTHORIZED = previous;
    await new Promise<void>((r) => server.close(() => r()));
  });

  const post = (http: UpstreamHttp) =>
    http.post({ url, headers: { 'content-type': 'application/json' }, body: '{"model":"m"}', timeouts: TIMEOUTS, cancel: new Cancellation() }).then(async (x) => {
      const text = await x.text();
      x.close();
      return { status: x.statusCode, text };
    });

  it('a body given as parts (a large same-protocol body, core/raw-json.ts) arrives whole, with its content-length', async () => {
    const http = new UpstreamHttp(() => ({ connections: 4, http2: true }));
    try {
      const parts = [Buffer.from('{"model":"m","messages":'), Buffer.from(JSON.stringify([{ role: 'user', content: 'x'.repeat(200_000) }])), Buffer.from('}')];
      const length = parts.reduce((n, b) => n + b.length, 0);
      const echo = new URL('/v1/echo', url);
      const x = await http.post({ url: echo, headers: { 'content-type': 'application/json', 'content-length': String(length) }, body: parts, timeouts: TIMEOUTS, cancel: new Cancellation() });
      const text = await x.text();
      x.close();
      expect(x.statusCode).toBe(200);
      expect(text).toBe(Buffer.concat(parts).toString());
    } finally {
      await http.close();
    }
  });

  it('40 concurrent POSTs share one session and are answered together, not one after the other', async () => {
    const http = new UpstreamHttp(() => ({ connections: 16, http2: true }));
    try {
      // The session is up first.
      expect((await post(http)).text).toBe('{"version":"2.0"}');
      sessions = peak = 0;
      const t0 = Date.now();
      const all = await Promise.all(Array.from({ length: 40 }, () => post(http)));
      expect(all.every((r) => r.status === 200 && r.text === '{"version":"2.0"}')).toBe(true);
      expect(sessions).toBeLessThanOrEqual(2);
      expect(peak).toBe(40);
      // 40 × 200 ms one after the other would take 8 s.
      expect(Date.now() - t0).toBeLessThan(3_000);
    } finally {
      await http.close();
    }
  });

  it('a burst before any session is up waits for one connection instead of opening one per request', async () => {
    const http = new UpstreamHttp(() => ({ connections: 1000, http2: true }));
    try {
      sessions = peak = 0;
      const all = await Promise.all(Array.from({ length: 150 }, () => post(http)));
      expect(all.every((r) => r.status === 200)).toBe(true);
      // 100 streams a session: two sessions (undici's own behaviour opened one per request, 150).
      expect(sessions).toBeLessThanOrEqual(3);
      expect(peak).toBe(150);
    } finally {
      await http.close();
    }
  });
});
