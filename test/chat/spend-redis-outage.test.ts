/**
 * A Redis outage in the middle of a run, over HTTP (docs/spend.md, "When Redis is unreachable"): two instances on one
 * PostgreSQL and a Redis of this test's own (a redis-server on a free port, killed and started again here — never the
 * shared one). While it is gone, a key with a spending limit gets 503 with a clear message on both instances (the
 * default fail mode, `closed`), a key without limits is served, and nothing is ever spent past the limit; once Redis is
 * back (empty: its counters are seeded again from the store) the key is served again up to its limit and no further.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulator, type Simulator } from '../../src/sim/index.js';
import { simCatalog } from '../chat-helpers.js';
import { freePort, startRedis, stopRedis } from '../redis-server.js';
import { createInferenceKey, startTwoInstances, type TestGateway } from '../helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a Redis outage mid-run, two instances over HTTP (PostgreSQL + a Redis of this test)', () => {
  let sim: Simulator;
  let a: TestGateway;
  let b: TestGateway;
  let close: (() => Promise<void>) | undefined;
  let port: number;
  let redis: ChildProcess | undefined;

  beforeAll(async () => {
    port = await freePort();
    redis = await startRedis(port);
    sim = await createSimulator();
    const file = join(mkdtempSync(join(tmpdir(), 'gw-outage-')), 'gateway.yaml');
    writeFileSync(file, stringify(simCatalog(sim.url)));
    ({ a, b, close } = await startTwoInstances({ GATEWAY_CONFIG: file, GATEWAY_DEFAULT_CATALOG: 'false', GATEWAY_REDIS_URL: `redis://127.0.0.1:${port}` }));
  });
  afterAll(async () => {
    await close?.();
    await sim?.close();
    if (redis) await stopRedis(redis);
  });

  const ask = (t: TestGateway, key: string) =>
    t.call('POST', '/chat/completions', { key, body: { model: 'test/alpha', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 12, provider: { only: ['sim-a'] } } });
  const usage = async (hash: string) => {
    // Every record written (both instances flush), then the store's figure.
    await Promise.all([a.gw.svc.recorder.flush(), b.gw.svc.recorder.flush()]);
    return Number((await a.call('GET', `/keys/${hash}`)).body.data.usage);
  };

  it('fails closed (503, clear message) for limited keys while Redis is gone, serves unlimited keys, never overspends, and recovers', async () => {
    // $0.00003 a request (reserved: $0.000051): room for ten requests' spend, never more.
    const LIMIT = 0.0003;
    const RESERVED_NANO = 51_000;
    const limited = await createInferenceKey(a, { name: 'outage-limited', limit: LIMIT });
    const free = await createInferenceKey(a, { name: 'outage-free' });
    for (const t of [a, b, a, b]) expect((await ask(t, limited.key)).status).toBe(200);
    const beforeBurst = await usage(limited.hash);

    // A burst in flight when Redis dies: every answer is a success, a refusal for lack of room, or the 503.
    sim.setKnobs('sim-a', { latencyMs: 300 });
    let statuses: number[];
    try {
      const burst = Promise.all(Array.from({ length: 12 }, (_, i) => ask(i % 2 ? a : b, limited.key).then((r) => r.status)));
      // Killed while requests are at the upstream: they settle after Redis is gone (spend that cannot be pushed).
      for (let i = 0; i < 600 && sim.stats('sim-a').inFlight < 2; i++) await sleep(5);
      await stopRedis(redis!);
      statuses = await burst;
    } finally {
      sim.setKnobs('sim-a', { latencyMs: null });
    }
    expect(statuses.every((s) => s === 200 || s === 402 || s === 503)).toBe(true);

    // Redis gone: a limited request this instance's lease still has room for goes on (its hold exists in Redis;
    // docs/spend.md, "Redis down"), and the first one it cannot cover gets a clear 503, on both instances; the
    // unlimited key is served. Whether a lease kept room after the burst depends on how the burst's admissions fell
    // between the instances (each settles $0.000021 below its reservation: three through one lease leave it room for a
    // fourth), so each answer is judged against the lease — with every hold settled and Redis gone, a lease's room can
    // only shrink (an idle one gives it back at a sync).
    const lease = (t: TestGateway) => {
      const l = t.gw.svc.spend.shared!.peek(`key:${limited.hash}:lifetime:lifetime`);
      return { room: l ? l.granted - l.held - l.used : 0, held: l?.held ?? 0, state: JSON.stringify(l) };
    };
    for (let i = 0; i < 200 && (lease(a).held > 0 || lease(b).held > 0); i++) await sleep(10);
    for (const t of [a, b]) {
      let r;
      for (let n = 0; ; n++) {
        const before = lease(t);
        r = await ask(t, limited.key);
        const after = lease(t);
        if (r.status !== 200) {
          expect(after.room, `refused while this instance's lease had room: ${after.state}`).toBeLessThan(RESERVED_NANO);
          break;
        }
        expect(before.room, `served without the room in this instance's lease: ${before.state}`).toBeGreaterThanOrEqual(RESERVED_NANO);
        expect(n, 'a lease never holds room for more than a few requests here').toBeLessThan(6);
      }
      expect(r.status).toBe(503);
      expect(r.body.error.message).toMatch(/Spending limits cannot be checked right now \(the shared spend counters are unreachable\)/);
      expect(r.body.error.metadata).toMatchObject({ error_type: 'spend_unavailable' });
      expect((await ask(t, free.key)).status).toBe(200);
    }
    const during = await usage(limited.hash);
    expect(during).toBeLessThanOrEqual(LIMIT);

    // Back, empty (no persistence): counters seeded again from the store; served up to the limit and never past it.
    redis = await startRedis(port);
    let served = false;
    for (let i = 0; i < 100 && !served; i++) {
      served = (await ask(i % 2 ? a : b, limited.key)).status === 200;
      if (!served) await sleep(100);
    }
    // Spend an instance settled but could not push before Redis lost its data is pushed only where the new seed does
    // not count it (docs/spend.md, "Seed versions"): never twice. The key is served again whenever the room left
    // still fits a reservation.
    expect(during).toBeGreaterThan(beforeBurst);
    if (LIMIT - during >= 0.000051) expect(served).toBe(true);
    // Each instance reconnects on its own (every ≤ 500 ms): both answer with something other than 503 within seconds.
    for (const t of [a, b]) {
      let status = 503;
      for (let i = 0; i < 50 && status === 503; i++) {
        status = (await ask(t, limited.key)).status;
        if (status === 503) await sleep(100);
      }
      expect([200, 402]).toContain(status);
    }
    const after: number[] = [];
    for (let i = 0; i < 20; i++) after.push((await ask(i % 2 ? a : b, limited.key)).status);
    expect(after).toContain(402);
    expect(after.every((s) => s === 200 || s === 402)).toBe(true);
    const total = await usage(limited.hash);
    expect(total).toBeLessThanOrEqual(LIMIT);
    // What is left is less than one more request's reservation: used up, not refused early (nothing counted twice).
    expect(LIMIT - total).toBeLessThan(0.000051 + 1e-12);
  });
});
