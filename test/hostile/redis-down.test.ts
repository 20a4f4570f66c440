/**
 * Issue 16, finding 3: an instance started while Redis is unreachable must not crash (the invalidation subscriber's
 * queued SUBSCRIBE used to reject with an unhandled MaxRetriesPerRequestError after ~20 reconnection attempts). It
 * serves in the documented degraded mode, says so in /ready's body and `gateway_redis_up`, and recovers when Redis
 * comes back. Redis is "down" as a closed port; it "comes back" as a TCP proxy to the real Redis opened on that port.
 */
import net from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { ResponseCache } from '../../src/services/response-cache.js';
import { createInferenceKey, REDIS_URL, startGateway, type TestGateway } from '../helpers.js';

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

function proxyTo(target: URL, port: number): Promise<net.Server> {
  const server = net.createServer((client) => {
    const up = net.connect(Number(target.port || 6379), target.hostname);
    client.pipe(up).pipe(client);
    client.on('error', () => up.destroy());
    up.on('error', () => client.destroy());
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

async function until(fn: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await fn()) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

describe('Redis unreachable at start-up', () => {
  let t: TestGateway | undefined;
  let proxy: net.Server | undefined;
  const unhandled: unknown[] = [];
  const onUnhandled = (err: unknown) => unhandled.push(err);
  process.on('unhandledRejection', onUnhandled);
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await t?.close();
    await new Promise((r) => (proxy ? proxy.close(r) : r(undefined)));
  });

  it('serves in degraded mode without crashing, says so, and recovers when Redis comes back', { timeout: 45_000 }, async () => {
    const port = await freePort();
    // Reconnection every 20 ms instead of ioredis' growing delay: the ~20 attempts after which a queued command fails
    // (73 s with the default delays) take about half a second.
    t = await startGateway('sqlite', { env: { GATEWAY_REDIS_URL: `redis://127.0.0.1:${port}`, GATEWAY_METRICS: 'public' }, gateway: { redisRetryMs: 20 } });

    const ready = await fetch(`${t.url}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', redis: 'unreachable', degraded: ['redis'] });
    expect(await (await fetch(`${t.url}/metrics`)).text()).toMatch(/^gateway_redis_up 0$/m);

    // Serving on: management and key changes work for much longer than the ~20 reconnection attempts after which the
    // queued subscription used to reject.
    const { key, hash } = await createInferenceKey(t);
    const end = Date.now() + 4_000;
    while (Date.now() < end) {
      expect((await t.call('GET', '/key', { key })).status).toBe(200);
      expect((await t.call('PATCH', `/keys/${hash}`, { body: { name: `k${Date.now()}` } })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(unhandled).toEqual([]);

    // Redis comes back: the instance reconnects, subscribes and hears other instances' invalidations again.
    proxy = await proxyTo(new URL(REDIS_URL), port);
    expect(await until(async () => ((await (await fetch(`${t!.url}/ready`)).json()) as { redis?: string }).redis === "up", 10_000)).toBe(true);
    expect(await (await fetch(`${t.url}/metrics`)).text()).toMatch(/^gateway_redis_up 1$/m);
    const heard: string[] = [];
    t.gw.svc.bus.subscribe((kind, id) => heard.push(`${kind}|${id}`));
    const other = new Redis(REDIS_URL);
    try {
      const id = `hostile-${Date.now()}`;
      expect(await until(async () => (await other.publish('gateway:invalidate', `another-instance|key|${id}`), heard.includes(`key|${id}`)), 10_000)).toBe(true);
    } finally {
      other.disconnect();
    }
    expect(unhandled).toEqual([]);
  });
});

describe('the response cache with Redis unreachable', () => {
  it('has an error listener: misses and skipped stores, warnings logged, no "Unhandled error event", no crash', { timeout: 20_000 }, async () => {
    const port = await freePort();
    const warnings: string[] = [];
    const log = { warn: (o: { err?: unknown }, msg: string) => warnings.push(`${msg}: ${String(o.err)}`) } as unknown as import('pino').Logger;
    const printed: string[] = [];
    const origError = console.error;
    console.error = (...args: unknown[]) => void printed.push(args.map(String).join(' '));
    const cache = new ResponseCache(`redis://127.0.0.1:${port}`, log);
    try {
      // Several reconnection attempts fail while the cache is in use.
      const end = Date.now() + 1_500;
      while (Date.now() < end) {
        expect(await cache.get('k')).toBeNull();
        await cache.set('k', { body: '{}', contentType: 'application/json', generationId: 'gen-1', ttl: 60 });
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await cache.close();
      console.error = origError;
    }
    expect(warnings.some((w) => w.startsWith('redis response cache error: ') && /ECONNREFUSED/.test(w))).toBe(true);
    expect(printed.filter((p) => p.includes('Unhandled error event'))).toEqual([]);
  });
});
