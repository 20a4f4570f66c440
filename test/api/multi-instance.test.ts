/**
 * Several gateway instances behind a load balancer: one PostgreSQL database and one Redis. A key changed on one
 * instance is refused by the others at once (Redis invalidation), not after the key cache's TTL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInferenceKey, freshDatabase, REDIS_URL, startGateway, type TestGateway } from '../helpers.js';

describe('two instances on one PostgreSQL database with Redis', () => {
  let a: TestGateway;
  let b: TestGateway;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await freshDatabase('postgres');
    drop = db.drop;
    // A long cache TTL: only the invalidation channel can make B notice a change in time.
    const env = { GATEWAY_REDIS_URL: REDIS_URL, GATEWAY_KEY_CACHE_TTL_MS: '600000' };
    a = await startGateway('postgres', { databaseUrl: db.url, env });
    b = await startGateway('postgres', { databaseUrl: db.url, env });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await drop?.();
  });

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
