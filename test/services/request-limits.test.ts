/**
 * Request rate limits as scopes of the spend ledger (docs/spend.md, "Request rate limits"), at the limiter over real
 * Redis: two instances admit exactly the room of a key's limit and of a guardrail limit out of concurrent bursts;
 * admissions come from the lease without a Redis round trip while it has room; with Redis cut, a lease with room goes
 * on and anything else is refused with 503; a lease of a ledger-only scope is given back and forgotten once idle (its
 * pushed counts are not waited on to reach the store, where they never go); one instance keeps a window's counter
 * until the window is over, however many counters there are.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { REDIS_URL } from '../helpers.js';
import type { HttpError } from '../../src/core/errors.js';
import type { GuardrailRequestLimit } from '../../src/core/rate-limits.js';
import { RateLimiter } from '../../src/services/rate-limits.js';
import { SpendService, type ScopeSpec } from '../../src/services/spend/index.js';
import { LocalLedger } from '../../src/services/spend/local.js';
import type { KeyRow } from '../../src/store/types.js';

const log = pino({ level: 'silent' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function client(url: string): Promise<Redis> {
  const r = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: () => 200 });
  r.on('error', () => undefined);
  if (r.status !== 'ready') await new Promise<void>((res) => r.once('ready', () => res()));
  return r;
}

/** A TCP relay to Redis that can be cut (every connection dropped, new ones refused). */
async function relay(): Promise<{ url: string; cut: () => void }> {
  const target = new URL(REDIS_URL);
  const sockets = new Set<Socket>();
  const server: Server = createServer((c) => {
    const up = connect(Number(target.port || 6379), target.hostname);
    for (const s of [c, up]) s.on('error', () => undefined), sockets.add(s);
    c.pipe(up).pipe(c);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  cleanup.push(() => void server.close());
  return {
    url: `redis://127.0.0.1:${(server.address() as { port: number }).port}`,
    cut: () => {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}

/** An instance: a spend ledger over its own Redis connection (shared prefix: one set of counters), and its limiter. */
async function instance(prefix: string, url = REDIS_URL, ledger: { syncMs?: number; idleMs?: number } = {}) {
  const redis = await client(url);
  const spend = new SpendService({ redis, ledger: { prefix, ...ledger } });
  const limiter = new RateLimiter(spend, log);
  cleanup.push(async () => {
    await spend.close();
    redis.disconnect();
  });
  return { redis, spend, limiter };
}

const key = (over: Partial<KeyRow> = {}) => ({ hash: randomUUID(), kind: 'inference', rate_limit_requests: null, rate_limit_interval_s: null, ...over }) as KeyRow;
const status = (e: HttpError | null) => e?.status ?? 200;

describe('request rate limits on the spend ledger, two instances on one Redis', () => {
  it('a concurrent burst split over both admits exactly the room of the key limit, and of a shared guardrail limit', { timeout: 60_000 }, async () => {
    const prefix = `gwtest:reqlimits:${randomUUID()}`;
    const [a, b] = [await instance(prefix), await instance(prefix)];
    for (let run = 0; run < 3; run++) {
      // The key's own limit: 17 of 60.
      const k = key({ rate_limit_requests: 17, rate_limit_interval_s: 3600 });
      const got = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).limiter.check(k)));
      expect(got.filter((e) => e === null)).toHaveLength(17);
      expect(got.filter((e) => e?.status === 429).every((e) => e!.metadata?.limit_source === 'key')).toBe(true);
      // A workspace guardrail limit of 23 shared by two keys (each with a looser limit of its own): 23 of 80.
      const g: GuardrailRequestLimit = { id: `g:${randomUUID()}:workspace:w`, guardrailId: 'g1', name: 'team', scope: 'workspace', limit: 23, intervalS: 86_400 };
      const source = { mayRateLimit: () => true, peekPolicy: () => ({ requestLimits: [g] }), policyFor: async () => ({ requestLimits: [g] }) };
      a.limiter.useGuardrails(source);
      b.limiter.useGuardrails(source);
      const keys = [key({ rate_limit_requests: 30, rate_limit_interval_s: 60 }), key()];
      const shared = await Promise.all(Array.from({ length: 80 }, (_, i) => (i % 2 ? a : b).limiter.check(keys[Math.floor(i / 2) % 2])));
      expect(shared.filter((e) => e === null)).toHaveLength(23);
      const refused = shared.filter((e) => e !== null);
      expect(refused.map(status).every((s) => s === 429)).toBe(true);
      expect(refused[0]!.metadata).toMatchObject({ limit_source: 'guardrail', guardrail_id: 'g1', limit: 23 });
      expect(refused[0]!.headers).toMatchObject({ 'x-ratelimit-limit': '23', 'x-ratelimit-remaining': '0' });
      a.limiter.useGuardrails({ ...source, mayRateLimit: () => false });
      b.limiter.useGuardrails({ ...source, mayRateLimit: () => false });
    }
  });

  it('admits from the lease without a Redis round trip while it has room', async () => {
    const prefix = `gwtest:reqlimits:${randomUUID()}`;
    const a = await instance(prefix);
    const trips = { n: 0 };
    const r = a.redis as unknown as { gwSpendAcquire: (...args: unknown[]) => Promise<unknown> };
    const acquire = r.gwSpendAcquire.bind(a.redis);
    r.gwSpendAcquire = (...args: unknown[]) => (trips.n++, acquire(...args));
    const k = key({ rate_limit_requests: 1_000_000, rate_limit_interval_s: 60 });
    let sync = 0;
    for (let i = 0; i < 640; i++) {
      const e = a.limiter.check(k);
      if (e instanceof Promise) expect(await e).toBeNull();
      else (sync++, expect(e).toBeNull());
    }
    // A lease takes up to 64 requests' worth: 640 requests need about 10 trips (the sync timer adds a few).
    expect(sync).toBeGreaterThanOrEqual(620);
    expect(trips.n).toBeLessThanOrEqual(20);
  });

  it('Redis cut: a lease with room goes on; a request the lease cannot cover gets 503 (fail closed, as spend)', async () => {
    const prefix = `gwtest:reqlimits:${randomUUID()}`;
    const proxy = await relay();
    const a = await instance(prefix, proxy.url);
    const warm = key({ rate_limit_requests: 1_000_000, rate_limit_interval_s: 3600 });
    expect(await a.limiter.check(warm)).toBeNull(); // takes a lease
    proxy.cut();
    await sleep(50);
    expect(a.limiter.check(warm)).toBeNull(); // from the lease, synchronously
    const cold = await a.limiter.check(key({ rate_limit_requests: 5, rate_limit_interval_s: 3600 }));
    expect(cold).toMatchObject({ status: 503, metadata: { error_type: 'spend_unavailable' } });
    expect(cold!.message).toContain('Rate limits cannot be checked right now');
    expect(a.limiter.check(key())).toBeNull(); // a key without a limit is not affected
  });

  it("pushes a window's counts and forgets the idle lease (its counts never reach the store: nothing is waited for)", async () => {
    const prefix = `gwtest:reqlimits:${randomUUID()}`;
    const a = await instance(prefix, REDIS_URL, { syncMs: 50, idleMs: 100 });
    const k = key({ rate_limit_requests: 1000, rate_limit_interval_s: 3600 });
    for (let i = 0; i < 7; i++) expect(await a.limiter.check(k)).toBeNull();
    const id = `requests:${k.hash}:3600:${Math.floor(Date.now() / 3_600_000)}`;
    expect(a.spend.shared!.peek(id)).not.toBeNull();
    await sleep(800);
    expect(a.spend.shared!.peek(id)).toBeNull();
    expect(Number(await a.redis.get(`${prefix}:spent:${id}`))).toBe(7);
    expect(await a.redis.hget(`${prefix}:hold:${id}`, a.spend.shared!.instance)).toBeNull();
  });
});

describe('request rate limits on one instance', () => {
  it("keeps the current window's counters past the trim threshold, and drops those of windows that are over", () => {
    let clock = 1_000_000;
    const ledger = new LocalLedger(() => clock);
    const scope = (id: string, endsAt: number): ScopeSpec => ({ id, kind: 'requests', label: 'requests', ttlS: 120, limitNano: 1, seed: async () => 0, ledgerOnly: { endsAt } });
    const current = scope('requests:k:60:now', 2_000_000);
    const r = ledger.reserve([current], 1);
    if (r instanceof Promise || !r.ok) throw new Error('first request refused');
    r.reservation.settle(1);
    for (let i = 0; i < 199_999; i++) {
      const x = ledger.reserve([scope(`requests:old:${i}`, 1_500_000)], 1);
      if (!(x instanceof Promise) && x.ok) x.reservation.settle(1);
    }
    clock = 1_600_000; // the old windows are over, the current one is not: the next new counter trims
    ledger.reserve([scope('requests:trigger', 2_000_000)], 1);
    expect(ledger.peek('requests:old:0')).toBeNull();
    expect(ledger.peek('requests:k:60:now')).toEqual({ spent: 1, held: 0 });
    expect(ledger.reserve([current], 1)).toMatchObject({ ok: false });
  });
});
