/**
 * The response cache as a step around the attempt runner (services/attempts/cache-step.ts), on /embeddings: a miss is
 * marked on the answer and on an error reply alike; an error is never kept; a clear drops the stored answer.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isolatedEnv, type ClockedEnv } from '../chat/util.js';
import { embed, embeddingCatalog } from './util.js';

describe('the response cache step', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra: embeddingCatalog });
  let env: ClockedEnv;
  beforeEach(() => {
    env = isolated();
  });
  const headers = { 'x-gateway-cache': 'true', 'x-gateway-cache-ttl': '60' };
  const ask = (extra: Record<string, string> = {}) => embed(env, { model: 'test/embed-fallback', input: 'cache step' }, { headers: { ...headers, ...extra } });

  it('an error on a miss carries the MISS headers and is not kept; the next answer is', async () => {
    env.sim.setKnobs('sim-emb', { errorStatus: 500 });
    env.sim.setKnobs('sim-emb2', { errorStatus: 500 });
    const failed = await ask();
    expect(failed.status).toBe(502);
    expect(failed.headers.get('x-gateway-cache-status')).toBe('MISS');
    expect(failed.headers.get('x-gateway-cache-ttl')).toBe('60');
    env.sim.resetKnobs();
    env.advance(31_000);
    const served = await ask();
    expect(served.status).toBe(200);
    expect(served.headers.get('x-gateway-cache-status')).toBe('MISS');
    const hit = await ask();
    expect(hit.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(hit.headers.get('x-generation-id')).toBe(served.headers.get('x-generation-id'));
    expect(hit.body).toEqual(served.body);
  });

  it('X-Gateway-Cache-Clear asks the provider again and keeps the new answer', async () => {
    const first = await ask();
    const cleared = await ask({ 'x-gateway-cache-clear': 'true' });
    expect(cleared.headers.get('x-gateway-cache-status')).toBe('MISS');
    expect(cleared.headers.get('x-generation-id')).not.toBe(first.headers.get('x-generation-id'));
    const hit = await ask();
    expect(hit.headers.get('x-gateway-cache-source-id')).toBe(cleared.headers.get('x-generation-id'));
  });
});
