/**
 * SpendService exactness (docs/spend.md): a limit with room for exactly N requests of known cost, 500 concurrent
 * reserve/settle cycles — exactly N admitted and recorded spend ≤ the limit, every time; one instance alone, two
 * instances on one Redis; a killed instance's holds expire after the heartbeat TTL; a Redis outage never overspends.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { REDIS_URL } from '../helpers.js';
import { SpendService, SpendUnavailableError, type ScopeSpec } from '../../src/services/spend/index.js';
import { RedisLedger, type RedisLedgerOptions } from '../../src/services/spend/redis-ledger.js';

const COST = 1_234_567; // nano-dollars per request ($0.001234567)
const N = 20;
const CYCLES = 500;

function scope(over: Partial<ScopeSpec> = {}): ScopeSpec {
  return { id: `test:${randomUUID()}`, kind: 'key', label: 'key limit', ttlS: 600, limitNano: N * COST, seed: async () => 0, ...over };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `CYCLES` concurrent cycles spread over the services: reserve, wait a little (the upstream), settle. */
async function burst(services: SpendService[], scopes: ScopeSpec[], cycles = CYCLES): Promise<{ admitted: number; refused: number; unavailable: number; settled: number }> {
  let admitted = 0;
  let refused = 0;
  let unavailable = 0;
  let settled = 0;
  await Promise.all(
    Array.from({ length: cycles }, async (_, i) => {
      const svc = services[i % services.length];
      let r;
      try {
        r = await svc.reserve(scopes, COST);
      } catch (err) {
        if (!(err instanceof SpendUnavailableError)) throw err;
        unavailable++;
        return;
      }
      if (!r.ok) {
        refused++;
        expect(r.availableNano).toBeLessThan(COST);
        return;
      }
      admitted++;
      await sleep(1 + (i % 7));
      r.reservation.settle(COST);
      settled += COST;
    }),
  );
  return { admitted, refused, unavailable, settled };
}

const clients: Redis[] = [];
function redis(url = REDIS_URL): Redis {
  const r = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
  r.on('error', () => undefined);
  clients.push(r);
  return r;
}
async function ready(r: Redis): Promise<void> {
  if (r.status === 'ready') return;
  await new Promise<void>((resolve) => r.once('ready', () => resolve()));
}

afterAll(async () => {
  for (const c of clients) c.disconnect();
});

/**
 * `n` SpendServices on one Redis under a fresh key prefix, each on a connection of its own (to `url`; `setup` runs on
 * each before it is awaited ready), with these ledger settings.
 */
async function instances(n: number, o: { ledger?: Partial<RedisLedgerOptions>; url?: string; setup?: (r: Redis) => void } = {}): Promise<{ prefix: string; conns: Redis[]; svcs: SpendService[] }> {
  const prefix = `gwtest:spend:${randomUUID()}`;
  const conns = Array.from({ length: n }, () => redis(o.url));
  conns.forEach((r) => o.setup?.(r));
  await Promise.all(conns.map(ready));
  return { prefix, conns, svcs: conns.map((r) => new SpendService({ redis: r, ledger: { prefix, ...o.ledger } })) };
}

/** One instance on Redis whose first request, in a scope with room for 1,000, was admitted (and took a lease). */
async function leased() {
  const { prefix, conns, svcs } = await instances(1);
  const s = scope({ limitNano: 1000 * COST });
  const first = await svcs[0].reserve([s], COST);
  expect(first.ok).toBe(true);
  return { prefix, r: conns[0], svc: svcs[0], s, first };
}

/** The spent counter and live holds of a scope in Redis. */
async function redisState(r: Redis, prefix: string, id: string): Promise<{ spent: number; held: number }> {
  const spent = Number((await r.get(`${prefix}:spent:${id}`)) ?? 0);
  const holds = await r.hgetall(`${prefix}:hold:${id}`);
  let held = 0;
  for (const [inst, v] of Object.entries(holds)) if ((await r.exists(`${prefix}:hb:${inst}`)) === 1) held += Math.max(0, Number(v));
  return { spent, held };
}

describe('SpendService, one instance without Redis', () => {
  it('admits exactly N of 500 concurrent requests, 5 times, and spends no more than the limit', async () => {
    const svc = new SpendService();
    for (let run = 0; run < 5; run++) {
      const s = scope();
      const r = await burst([svc], [s]);
      expect(r).toMatchObject({ admitted: N, refused: CYCLES - N, unavailable: 0 });
      expect(r.settled).toBeLessThanOrEqual(s.limitNano);
    }
  });

  it('starts from the store\'s spend (seeded once) and checks every scope of a request', async () => {
    let seeds = 0;
    const key = scope({ limitNano: 100 * COST, seed: async () => (seeds++, 90 * COST) }); // room for 10
    const budget = scope({ kind: 'workspace_budget', label: 'workspace budget (daily)', limitNano: 5 * COST }); // room for 5
    const svc = new SpendService();
    const r = await burst([svc], [key, budget]);
    expect(r.admitted).toBe(5);
    expect(seeds).toBe(1);
    const refused = await svc.reserve([key, budget], COST);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.scope.label).toBe('workspace budget (daily)');
  });

  it('frees a released hold, and settles to the real cost', async () => {
    const svc = new SpendService();
    const s = scope({ limitNano: 3 * COST });
    const a = await svc.reserve([s], 2 * COST);
    expect(a.ok).toBe(true);
    expect((await svc.reserve([s], 2 * COST)).ok).toBe(false);
    if (a.ok) a.reservation.settle(COST); // cost less than reserved: the rest is free again
    const b = await svc.reserve([s], 2 * COST);
    expect(b.ok).toBe(true);
    if (b.ok) b.reservation.release();
    if (b.ok) b.reservation.settle(5 * COST); // ignored: already ended
    expect((await svc.reserve([s], 2 * COST)).ok).toBe(true);
  });
});

describe('SpendService, two instances on one Redis', () => {
  it('admits exactly N of 500 concurrent requests across both, 5 times; spend + holds never pass the limit', async () => {
    for (let run = 0; run < 5; run++) {
      const {
        prefix,
        conns: [ra],
        svcs: [a, b],
      } = await instances(2);
      const s = scope();
      const r = await burst([a, b], [s]);
      expect(r).toMatchObject({ admitted: N, refused: CYCLES - N, unavailable: 0 });
      await Promise.all([a.shared!.sync(true), b.shared!.sync(true)]);
      const st = await redisState(ra, prefix, s.id);
      expect(st.spent).toBe(N * COST);
      expect(st.spent + st.held).toBeLessThanOrEqual(s.limitNano);
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("admits exactly N when one instance's lease holds room the other needs: the scope is squeezed and the room comes back", async () => {
    for (let run = 0; run < 3; run++) {
      const {
        prefix,
        conns: [ra],
        svcs: [a, b],
      } = await instances(2);
      const s = scope({ limitNano: 3 * COST });
      // a's first request takes a lease of two requests (one of them spare), then a goes quiet with it in flight.
      const first = await a.reserve([s], COST);
      expect(first.ok).toBe(true);
      expect(a.shared!.peek(s.id)).toMatchObject({ granted: 2 * COST, held: COST });
      // b gets the one request left in Redis; its second finds a's spare room, squeezes, and is admitted once a
      // gives it back (within a sync period) — three in all, the fourth refused.
      const onB = [await b.reserve([s], COST), await b.reserve([s], COST)];
      expect(onB.map((r) => r.ok)).toEqual([true, true]);
      expect(a.shared!.peek(s.id)).toMatchObject({ granted: COST, held: COST });
      const fourth = await Promise.all([a.reserve([s], COST), b.reserve([s], COST)]);
      expect(fourth.map((r) => r.ok)).toEqual([false, false]);
      // Settled: exactly the limit spent, nothing held.
      for (const r of [first, ...onB]) if (r.ok) r.reservation.settle(COST);
      await Promise.all([a.shared!.sync(true), b.shared!.sync(true)]);
      const st = await redisState(ra, prefix, s.id);
      expect(st.spent).toBe(3 * COST);
      expect(st.held).toBe(0);
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('serves from a lease without a Redis call while the budget is far from spent', async () => {
    const { svc, s } = await leased();
    // The first call took a lease of several requests: the next ones are answered synchronously.
    const second = svc.reserve([s], COST);
    expect(second instanceof Promise).toBe(false);
    await svc.close();
  });

  it('a lowered limit applies at once: the lease taken under the old one is not used, its room goes back', async () => {
    const { prefix, r, svc, s, first } = await leased();
    expect(svc.shared!.peek(s.id)!.granted).toBeGreaterThan(2 * COST); // a lease with room for more
    // Lowered to room for 1.5 requests (a guardrail's or key's limit changed): the next one is refused, by Redis.
    const lowered = { ...s, limitNano: Math.floor(1.5 * COST) };
    const next = await svc.reserve([lowered], COST);
    expect(next.ok).toBe(false);
    expect(svc.shared!.peek(s.id)).toMatchObject({ granted: COST, held: COST });
    if (first.ok) first.reservation.settle(COST);
    await svc.shared!.sync(true);
    expect(await redisState(r, prefix, s.id)).toEqual({ spent: COST, held: 0 });
    await svc.close();
  });

  it('a limit lowered while a trip to Redis is under way is not served from the grant that trip brings back', async () => {
    const { svc, s } = await leased();
    // A request the lease cannot cover goes to Redis under the old limit; while it is there, the limit is lowered to
    // room for 1.5 requests and another request of the scope arrives (it waits for that trip).
    const big = svc.reserve([s], 300 * COST);
    const lowered = { ...s, limitNano: Math.floor(1.5 * COST) };
    const next = svc.reserve([lowered], COST);
    expect((await big).ok).toBe(true); // decided by Redis under the old limit, before the change
    // The grant that trip brought back (with its slack) must not serve the request under the new limit.
    expect((await next).ok).toBe(false);
    await svc.close();
  });

  it('drops a killed instance\'s holds after the heartbeat TTL, never renewed by the other instance\'s traffic', async () => {
    const ttl = 600;
    const {
      svcs: [a, b],
    } = await instances(2, { ledger: { heartbeatTtlMs: ttl } });
    const s = scope({ limitNano: 2 * COST });
    const held = await a.reserve([s], 2 * COST);
    expect(held.ok).toBe(true);
    a.shared!.kill(); // a crash: no heartbeat, nothing given back
    const started = Date.now();
    // The other instance keeps asking; its traffic must not keep the dead hold alive.
    let admittedAt = 0;
    while (Date.now() - started < 5 * ttl) {
      const r = await b.reserve([s], COST);
      if (r.ok) {
        admittedAt = Date.now() - started;
        r.reservation.release();
        break;
      }
      await sleep(50);
    }
    expect(admittedAt).toBeGreaterThan(ttl / 2);
    expect(admittedAt).toBeLessThan(2 * ttl + 500);
    await b.close();
  });
});

/** A TCP relay to Redis that can be cut (an outage), or lose the next reply (the command ran, its answer never came). */
async function relay(): Promise<{ url: string; cut: () => void; loseNextReply: () => void; close: () => Promise<void> }> {
  const target = new URL(REDIS_URL);
  const sockets = new Set<Socket>();
  let down = false;
  let lose = false;
  const server: Server = createServer((client) => {
    if (down) return client.destroy();
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream);
    upstream.on('data', (d: Buffer) => {
      if (!lose) return void client.write(d);
      lose = false;
      client.destroy();
      upstream.destroy();
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `redis://127.0.0.1:${port}`,
    cut: () => {
      down = true;
      for (const s of sockets) s.destroy();
    },
    loseNextReply: () => {
      lose = true;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('SpendService, Redis outage mid-run', () => {
  it('applies a push or a charge whose reply was lost once, when it is sent again', async () => {
    const prefix = `gwtest:spend:${randomUUID()}`;
    const proxy = await relay();
    const ra = new Redis(proxy.url, { maxRetriesPerRequest: 0, enableOfflineQueue: false, autoResendUnfulfilledCommands: false, retryStrategy: () => 20 });
    ra.on('error', () => undefined);
    clients.push(ra);
    await ready(ra);
    const direct = redis();
    await ready(direct);
    const ledger = new RedisLedger(ra, { prefix }); // no timers: every trip to Redis below is this test's
    const s = scope({ limitNano: 100 * COST });
    for (let round = 1; round <= 3; round++) {
      const r = await ledger.reserve([s], COST);
      if (!r.ok) throw new Error('refused');
      r.reservation.settle(COST);
      proxy.loseNextReply();
      await expect(ledger.sync(true)).rejects.toThrow();
      // The script ran (the spend is in Redis) but the instance does not know it: the push stays apart, unacknowledged.
      expect((await redisState(direct, prefix, s.id)).spent).toBe(round * COST);
      expect(ledger.peek(s.id)!.unacked?.push).toBe(COST);
      await ready(ra);
      await ledger.sync(true); // sent again under the same number: not applied twice
      expect((await redisState(direct, prefix, s.id)).spent).toBe(round * COST);
      expect(ledger.peek(s.id)).toMatchObject({ used: 0, unacked: null, held: 0 });
    }
    // Nothing is held for this instance any more: its lease (given back twice over the lost reply) is back to zero.
    expect((await redisState(direct, prefix, s.id)).held).toBe(0);
    // A charge (a video job's correction) whose reply was lost: kept, sent again by the sync, applied once.
    await ledger.charge([s], 1_000); // (the script is loaded: the reply lost next is the charge's own)
    proxy.loseNextReply();
    await ledger.charge([s], 1_000);
    expect((await redisState(direct, prefix, s.id)).spent).toBe(3 * COST + 2_000);
    await ready(ra);
    await ledger.sync();
    expect((await redisState(direct, prefix, s.id)).spent).toBe(3 * COST + 2_000);
    await ledger.charge([s], -500);
    expect((await redisState(direct, prefix, s.id)).spent).toBe(3 * COST + 1_500);
    ledger.kill();
    ra.disconnect();
    proxy.cut();
    await proxy.close();
  });

  it('never overspends: limited requests fail closed (503) while Redis is unreachable', async () => {
    const proxy = await relay();
    const {
      prefix,
      svcs: [a, b],
    } = await instances(2, { url: proxy.url, setup: (r) => (r.options.retryStrategy = () => null) });
    const s = scope({ limitNano: 400 * COST });
    // One wave with Redis, the next in flight when it goes away, a last one without it.
    const before = await burst([a, b], [s], 250);
    expect(before.admitted).toBe(250);
    const cutting = sleep(2).then(() => proxy.cut());
    const during = await burst([a, b], [s], 250);
    await cutting;
    const after = await burst([a, b], [s], 100);
    const r = { admitted: before.admitted + during.admitted + after.admitted, unavailable: during.unavailable + after.unavailable, settled: before.settled + during.settled + after.settled };
    expect(after.unavailable).toBeGreaterThan(0);
    expect(r.admitted).toBeLessThanOrEqual(400);
    // After the outage, what reached Redis plus what each instance still holds locally stays within the limit.
    const direct = redis();
    await ready(direct);
    const st = await redisState(direct, prefix, s.id);
    // A push whose reply was lost is counted once: locally only when Redis did not apply it (its ack key is below it).
    let local = 0;
    for (const l of [a, b].map((x) => x.shared!.peek(s.id))) {
      if (!l) continue;
      local += l.used;
      if (l.unacked && Number((await direct.get(l.unacked.ackKey)) ?? 0) < l.unacked.seq) local += l.unacked.push;
    }
    expect(st.spent + local).toBeLessThanOrEqual(s.limitNano);
    expect(r.settled).toBeLessThanOrEqual(s.limitNano);
    a.shared!.kill();
    b.shared!.kill();
    await proxy.close();
  });

  it('counts locally instead when the operator chose fail mode "local"', async () => {
    const proxy = await relay();
    const ra = redis(proxy.url);
    ra.options.retryStrategy = () => null;
    await ready(ra);
    const svc = new SpendService({ redis: ra, ledger: { prefix: `gwtest:spend:${randomUUID()}` }, failMode: 'local' });
    proxy.cut();
    await sleep(50);
    const s = scope({ limitNano: 3 * COST });
    const r = await burst([svc], [s]);
    expect(r).toMatchObject({ admitted: 3, unavailable: 0 });
    svc.shared!.kill();
    await proxy.close();
  });
});
