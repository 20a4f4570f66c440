/**
 * Seed versions (docs/spend.md, "When Redis comes back empty"): Redis loses its spend counters while two instances
 * hold settled spend they have not pushed yet, part of it already written to the store. The counter is seeded again
 * from the store by one of them; each instance then pushes only what that seed does not count — so the counter ends
 * equal to the spend, each amount once, whichever instance seeds, whether the records were written before the seed or
 * after it. Each instance's recorder is simulated (records queued, then written by flushes) over one shared "store".
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { REDIS_URL } from '../helpers.js';
import { RedisLedger } from '../../src/services/spend/redis-ledger.js';
import type { ScopeSpec } from '../../src/services/spend/index.js';
import { MAX_SEGMENTS } from '../../src/services/spend/seed-epochs.js';

const COST = 1_234_567;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const clients: Redis[] = [];
afterAll(() => {
  for (const c of clients) c.disconnect();
});
async function client(): Promise<Redis> {
  const r = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  r.on('error', () => undefined);
  clients.push(r);
  if (r.status !== 'ready') await new Promise<void>((res) => r.once('ready', () => res()));
  return r;
}

/** The store's written spend (nano-dollars), shared by the instances. */
interface Store {
  written: number;
}

/** One gateway instance: a ledger on Redis (no timers: every trip is the test's) and its recorder. */
class Instance {
  queued = 0;
  flushStarts = 0;
  settled = 0;
  readonly ledger: RedisLedger;
  readonly spec: ScopeSpec;

  constructor(readonly redis: Redis, prefix: string, id: string, private readonly store: Store) {
    this.ledger = new RedisLedger(redis, { prefix, flushMark: () => this.flushStarts });
    // The seed: what the store holds plus this instance's records not written yet (as GuardrailSpend reads it).
    this.spec = { id, kind: 'key', label: 'key limit', ttlS: 600, limitNano: 1_000 * COST, seed: async () => this.store.written + this.queued };
  }

  /** `n` requests: reserved, recorded (before the settle, as the attempt runner does), settled (at `actual` each). */
  async spend(n: number, actual = COST): Promise<void> {
    for (let i = 0; i < n; i++) {
      const r = await this.ledger.reserve([this.spec], COST);
      if (!r.ok) throw new Error('refused');
      this.queued += actual;
      r.reservation.settle(actual);
      this.settled += actual;
    }
  }

  /** The recorder's flush: every queued record written. */
  flush(): void {
    const through = ++this.flushStarts;
    this.store.written += this.queued;
    this.queued = 0;
    this.ledger.stored(through);
  }
}

async function setup(): Promise<{ redis: Redis; prefix: string; a: Instance; b: Instance; wipe: () => Promise<void> }> {
  const redis = await client();
  const prefix = `gwtest:reseed:${randomUUID()}`;
  const id = `test:${randomUUID()}`;
  const store: Store = { written: 0 };
  const a = new Instance(await client(), prefix, id, store);
  const b = new Instance(await client(), prefix, id, store);
  // Redis restarted without persistence: every key of spend control is gone (counters, holds, heartbeats, acks).
  const wipe = async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
  };
  return { redis, prefix, a, b, wipe };
}

const spent = async (redis: Redis, prefix: string, id: string) => Number((await redis.get(`${prefix}:spent:${id}`)) ?? 0);

describe('spend counters seeded again after Redis lost them: no amount counted twice nor missed', () => {
  it('the other instance pushes only what was not written to the store before the seed', async () => {
    const { redis, prefix, a, b, wipe } = await setup();
    await a.spend(5);
    await b.spend(5);
    await Promise.all([a.ledger.sync(true), b.ledger.sync(true)]);
    a.flush();
    b.flush();
    expect(await spent(redis, prefix, a.spec.id)).toBe(10 * COST);
    // Settled and not pushed: 3 each written to the store, then 1 (a) and 2 (b) recorded but not written yet.
    await a.spend(3);
    await b.spend(3);
    a.flush();
    b.flush();
    await a.spend(1);
    await b.spend(2);
    await sleep(20);
    await wipe();
    // a seeds (the store + its own unwritten record) and pushes nothing it counted; b's push under the old seed is
    // refused, and b sends again only its 2 unwritten requests' spend.
    await a.spend(1);
    await b.ledger.sync(true);
    await a.ledger.sync(true);
    expect(await spent(redis, prefix, a.spec.id)).toBe(a.settled + b.settled);
    expect(a.settled + b.settled).toBe(20 * COST);
    expect(a.ledger.peek(a.spec.id)).toMatchObject({ used: 0, unacked: null });
    expect(b.ledger.peek(b.spec.id)).toMatchObject({ used: 0, unacked: null });
  });

  it('pushes everything written after the seed was read (records written late are not in it)', async () => {
    const { redis, prefix, a, b, wipe } = await setup();
    await a.spend(4);
    await b.spend(4);
    await Promise.all([a.ledger.sync(true), b.ledger.sync(true)]);
    a.flush();
    b.flush();
    await a.spend(2);
    await b.spend(3);
    await wipe();
    await a.spend(1); // a seeds: the store holds none of b's 3
    await sleep(20);
    b.flush(); // b's records reach the store only now
    await b.ledger.sync(true);
    await a.ledger.sync(true);
    expect(await spent(redis, prefix, a.spec.id)).toBe(a.settled + b.settled);
    expect(a.settled + b.settled).toBe(14 * COST);
  });

  it('is exact whichever instance seeds when both find the counter gone at once, repeated after each loss', async () => {
    const { redis, prefix, a, b, wipe } = await setup();
    for (let round = 0; round < 5; round++) {
      await Promise.all([a.spend(2 + round), b.spend(3)]);
      if (round % 2 === 0) a.flush();
      else b.flush();
      await Promise.all([a.spend(1), b.spend(round)]);
      await sleep(20);
      await wipe();
      // Both instances seed concurrently (each from the store and its own unwritten records): one seed wins.
      await Promise.all([a.spend(1), b.spend(1)]);
      await Promise.all([a.ledger.sync(true), b.ledger.sync(true)]);
      await Promise.all([a.ledger.sync(true), b.ledger.sync(true)]);
      expect(await spent(redis, prefix, a.spec.id)).toBe(a.settled + b.settled);
      a.flush();
      b.flush();
    }
  });

  it('keeps the unpushed segments bounded through a Redis outage of thousands of flushes, and the counter exact after it', async () => {
    const { redis, prefix, a, b, wipe } = await setup();
    await a.spend(2);
    await b.spend(2);
    await a.ledger.sync();
    // a loses Redis. Its lease (64 requests' room) serves thousands of cheap requests meanwhile, one recorder flush
    // after each; its sync timer keeps failing (its first failed push stays unacknowledged).
    a.redis.disconnect();
    for (let f = 0; f < 3_000; f++) {
      await a.spend(1, 1_000 + (f % 13));
      a.flush();
      if (f % 100 === 0) await a.ledger.sync().catch(() => undefined);
      const p = a.ledger.peek(a.spec.id)!;
      expect(p.segments).toBeLessThanOrEqual(MAX_SEGMENTS);
      expect(p.unacked?.segments ?? 0).toBeLessThanOrEqual(MAX_SEGMENTS);
    }
    await a.spend(3, 2_000); // recorded, not written yet
    await sleep(20);
    // Redis also lost its counters meanwhile: b seeds from the store, which holds a's flushed records.
    await wipe();
    await b.spend(1);
    await sleep(20);
    a.redis.connect().catch(() => undefined);
    await new Promise<void>((res) => (a.redis.status === 'ready' ? res() : a.redis.once('ready', () => res())));
    await a.ledger.sync(true);
    await b.ledger.sync(true);
    expect(await spent(redis, prefix, a.spec.id)).toBe(a.settled + b.settled);
    expect(a.ledger.peek(a.spec.id)).toMatchObject({ used: 0, unacked: null, segments: 0 });
  });

  it('pushes again spend it had pushed whose records were written after the new seed read the store', async () => {
    const { redis, prefix, a, b, wipe } = await setup();
    await a.spend(3);
    await b.spend(2);
    // Pushed and applied; the records are not written yet.
    await Promise.all([a.ledger.sync(true), b.ledger.sync(true)]);
    expect(await spent(redis, prefix, a.spec.id)).toBe(5 * COST);
    await sleep(20);
    await wipe();
    // b seeds: the store holds none of a's 3 (b's own 2 are in its seed, as its records not written yet).
    await b.spend(1);
    await sleep(20);
    a.flush(); // written only now, after the seed's version time
    b.flush();
    // a learns of the new seed at its next sync and pushes its 3 again (an idle lease syncs while that is unknown).
    await a.ledger.sync();
    await a.ledger.sync();
    await b.ledger.sync(true);
    expect(await spent(redis, prefix, a.spec.id)).toBe(a.settled + b.settled);
    expect(a.settled + b.settled).toBe(6 * COST);
    // Confirmed under the new seed after its records were written: nothing left to watch, the idle lease is forgotten.
    await sleep(1_100);
    await a.ledger.sync();
    await a.ledger.sync();
    expect(a.ledger.peek(a.spec.id)).toBeNull();
  });

  it('does not push again what the new seed read from the store', async () => {
    const { redis, prefix, a, b, wipe } = await setup();
    await a.spend(3);
    await b.spend(2);
    await Promise.all([a.ledger.sync(true), b.ledger.sync(true)]);
    a.flush();
    b.flush();
    await sleep(20);
    await wipe();
    await b.spend(1); // b seeds: the store holds all 5
    await a.ledger.sync();
    await a.ledger.sync();
    await b.ledger.sync(true);
    expect(await spent(redis, prefix, a.spec.id)).toBe(a.settled + b.settled);
  });
  it('counts once what its own seed read when two of its trips seeded at once and the first seed won', async () => {
    const { redis, prefix, a, wipe } = await setup();
    await a.spend(3);
    await a.ledger.sync(true);
    a.flush();
    // Settled and not pushed: 2 written to the store, then 1 recorded and not written yet.
    await a.spend(2);
    a.flush();
    await a.spend(1);
    await sleep(20);
    await wipe();
    // Two trips of a both find the counter gone and both seed (a sync, and a flush a few ms later: another seed
    // version). The first seed's read ends once the second started, and arrives first: the counter starts from it, and
    // the second (the last seed a took) is ignored. Both read the store and a's unwritten record: 6 requests.
    const read = a.spec.seed;
    let calls = 0;
    let release!: () => void;
    const secondStarted = new Promise<void>((r) => (release = r));
    a.spec.seed = async () => {
      if (++calls === 1) await secondStarted;
      else (release(), await sleep(30));
      return read();
    };
    const first = a.ledger.sync(true);
    await sleep(5);
    await Promise.all([first, a.ledger.flush([a.spec])]);
    expect(calls).toBe(2);
    await a.ledger.sync(true);
    // Without its own first seed remembered, a took it for another's and pushed its 3 unpushed requests again.
    expect(await spent(redis, prefix, a.spec.id)).toBe(a.settled);
    expect(a.settled).toBe(6 * COST);
    expect(a.ledger.peek(a.spec.id)).toMatchObject({ used: 0, unacked: null });
  });
});
