/**
 * Several gateway instances behind a load balancer: one PostgreSQL database and one Redis. A key changed on one
 * instance is refused by the others at once (Redis invalidation), not after the key cache's TTL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInferenceKey, freshDatabase, REDIS_URL, startGateway, startTwoInstances, type TestGateway } from '../helpers.js';

describe('two instances on one PostgreSQL database with Redis', () => {
  let a: TestGateway;
  let b: TestGateway;
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    // A long cache TTL: only the invalidation channel can make B notice a change in time.
    ({ a, b, close } = await startTwoInstances({ GATEWAY_KEY_CACHE_TTL_MS: '600000' }));
  });
  afterAll(async () => close?.());

  async function eventually(check: () => Promise<boolean>, ms = 2000): Promise<boolean> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      if (await check()) return true;
      await new Promise((r) => setTimeout(r, 20));
    }
    return check();
  }

  it('both instances share the organization created once', async () => {
    const ka = await a.call('GET', '/organization/members');
    const kb = await b.call('GET', '/organization/members');
    expect(ka.status).toBe(200);
    expect(kb.body).toEqual(ka.body);
    expect(ka.body.total_count).toBe(1);
  });

  it('a key disabled on one instance is refused by the other at once; re-enabled, accepted again', async () => {
    const k = await createInferenceKey(a, { name: 'shared' });
    // B caches the key.
    expect((await b.call('GET', '/key', { key: k.key })).status).toBe(200);
    expect((await a.call('PATCH', `/keys/${k.hash}`, { body: { disabled: true } })).status).toBe(200);
    expect(await eventually(async () => (await b.call('GET', '/key', { key: k.key })).status === 401)).toBe(true);
    expect((await a.call('PATCH', `/keys/${k.hash}`, { body: { disabled: false } })).status).toBe(200);
    expect(await eventually(async () => (await b.call('GET', '/key', { key: k.key })).status === 200)).toBe(true);
  });

  it('a key deleted on one instance is refused by the other at once', async () => {
    const k = await createInferenceKey(b, { name: 'to-delete' });
    expect((await a.call('GET', '/key', { key: k.key })).status).toBe(200);
    expect((await b.call('DELETE', `/keys/${k.hash}`)).status).toBe(200);
    expect(await eventually(async () => (await a.call('GET', '/key', { key: k.key })).status === 401)).toBe(true);
  });
});

describe('spending limits across two instances with Redis', () => {
  it("one instance's not-yet-written spend counts on the other at once", async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { stringify } = await import('yaml');
    const { createSimulator } = await import('../../src/sim/index.js');
    const { simCatalog } = await import('../chat-helpers.js');
    const sim = await createSimulator();
    const dir = mkdtempSync(join(tmpdir(), 'gw-multi-'));
    writeFileSync(join(dir, 'gateway.yaml'), stringify(simCatalog(sim.url)));
    const db = await freshDatabase('postgres');
    // Records are written only every minute: the spend on A stays in A's memory (and in Redis) during the test.
    const env = { GATEWAY_REDIS_URL: REDIS_URL, GATEWAY_CONFIG: join(dir, 'gateway.yaml'), GATEWAY_DEFAULT_CATALOG: 'false' };
    const slow = { recorder: { intervalMs: 60_000, batchSize: 10_000 } };
    const a = await startGateway('postgres', { databaseUrl: db.url, env, gateway: slow });
    const b = await startGateway('postgres', { databaseUrl: db.url, env, gateway: slow });
    try {
      // $0.00012; each request costs $0.00003 (6 prompt × $0.000001 + 12 completion × $0.000002) and reserves its maximum,
      // $0.000051 (the prompt's 27-token bound + max_tokens 12) before its upstream call (docs/spend.md).
      const k = await createInferenceKey(a, { name: 'shared-limit', limit: 0.00012 });
      const chat = (t: TestGateway) =>
        t.call('POST', '/chat/completions', { key: k.key, body: { model: 'test/alpha', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 12, provider: { only: ['sim-a'] } } });
      for (let i = 0; i < 3; i++) expect((await chat(a)).status).toBe(200);
      // $0.00009 spent on A, nothing written yet: B has no room for $0.000051 and refuses.
      const refused = await chat(b);
      expect(refused.status).toBe(402);
      expect(refused.body.error.message).toMatch(/This request requires more credits, or fewer max_tokens\. You requested up to 12 tokens, but can only afford [01]\./); // 0 while A still leases part of what is left
    } finally {
      await a.stop();
      await b.stop();
      await db.drop();
      await sim.close();
    }
  });
});
