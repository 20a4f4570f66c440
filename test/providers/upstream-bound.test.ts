/**
 * GATEWAY_UPSTREAM_MAX_BYTES on one upstream exchange (providers/http.ts): a whole answer (`text()`) and an answer read
 * as a stream but bounded as a whole (`boundAsWhole()`, e.g. streamed images) fail with the 502 naming the size once
 * more than the bound has arrived — also when the body had already arrived whole before it was read — while a plain
 * stream read is bounded per event by its parser only.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cancellation, UpstreamHttp, type UpstreamExchange } from '../../src/providers/http.js';

const MAX = 2048;
const TIMEOUTS = { connectMs: 5_000, firstByteMs: 10_000, idleMs: 10_000, totalMs: 20_000 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the upstream answer bound', () => {
  let server: Server;
  let base: string;
  const http = new UpstreamHttp(null, MAX);

  beforeAll(async () => {
    // /whole/<bytes>: one write; /chunks/<count>: 1,000-byte writes 50 ms apart.
    server = createServer((req, res) => {
      req.resume();
      const [, kind, n] = req.url!.split('/');
      res.writeHead(200, { 'content-type': 'text/plain' });
      if (kind === 'whole') return void res.end('x'.repeat(Number(n)));
      let left = Number(n);
      const tick = () => {
        if (left-- === 0) return void res.end();
        res.write('y'.repeat(1000));
        setTimeout(tick, 50);
      };
      tick();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await http.close();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const post = (path: string) => http.post({ url: new URL(path, base), headers: {}, body: '{}', timeouts: TIMEOUTS, cancel: new Cancellation() });
  /** Every read until the end or a failure: the bytes read, and the failure's message. */
  async function drain(x: UpstreamExchange): Promise<{ bytes: number; error: string | null }> {
    let bytes = 0;
    try {
      for (let b = await x.read(); b !== null; b = await x.read()) bytes += b.length;
      return { bytes, error: null };
    } catch (err) {
      return { bytes, error: (err as Error).message };
    } finally {
      x.close();
    }
  }

  it('text(): a body past the bound is refused, also when it arrived whole before it was read', async () => {
    const x = await post('/whole/4096');
    await sleep(100);
    await expect(x.text()).rejects.toThrow(`Provider returned a response larger than ${MAX} bytes`);
    x.close();
    const ok = await post('/whole/2048');
    expect(await ok.text()).toHaveLength(2048);
    ok.close();
  });

  it('boundAsWhole(): the reads before the bound are handed out, then the 502 (the data past it never is)', async () => {
    const x = await post('/chunks/5');
    x.boundAsWhole();
    const cut = await drain(x);
    expect(cut.error).toBe(`Provider returned a response larger than ${MAX} bytes`);
    // The two writes within the bound (fewer only if the machine stalled long enough for writes to arrive together).
    expect([1000, 2000]).toContain(cut.bytes);
    // Not bounded as a whole: the same stream reads to its end.
    expect(await drain(await post('/chunks/5'))).toEqual({ bytes: 5000, error: null });
    // Within the bound: to the end.
    const small = await post('/chunks/2');
    small.boundAsWhole();
    expect(await drain(small)).toEqual({ bytes: 2000, error: null });
  });

  it('boundAsWhole() after the body arrived past the bound: nothing of it is read', async () => {
    const x = await post('/whole/4096');
    await sleep(100);
    x.boundAsWhole();
    expect(await drain(x)).toEqual({ bytes: 0, error: `Provider returned a response larger than ${MAX} bytes` });
  });
});
