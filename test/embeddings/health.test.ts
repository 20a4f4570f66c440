/**
 * The health rule end to end (core/health-rule.ts, docs/architecture.md): an upstream refusal caused by the request
 * itself never makes the endpoint unhealthy for the next request — issue 16's "one key can take an endpoint down for
 * every key" — while the endpoint's own failures still do.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isolatedEnv, type ClockedEnv } from '../chat/util.js';
import { embed, embeddingCatalog } from './util.js';

describe('POST /embeddings: a request’s own fault does not count against the endpoint', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra: embeddingCatalog });
  let env: ClockedEnv;
  beforeEach(() => {
    env = isolated();
  });
  const ask = (body: Record<string, unknown> = {}) => embed(env, { model: 'test/embed', input: 'hello world', ...body });

  it('a body the upstream refuses (dimensions beyond the model: its 400) → 400; the next request is served by the same endpoint', async () => {
    const bad = await ask({ dimensions: 5000 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.metadata.error_type).toBe('invalid_request');
    const next = await ask();
    expect(next.status).toBe(200);
    expect(env.sim.stats('sim-emb').requests).toBe(2);
  });

  it.each([404, 409, 415, 422])('an upstream %i for this request → its error; the endpoint stays routable', async (status) => {
    env.sim.setKnobs('sim-emb', { errorStatus: status, failTimes: 1 });
    const bad = await ask();
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(bad.body.error.metadata.provider_code).toBe(status);
    const next = await ask();
    expect(next.status).toBe(200);
    expect(env.sim.stats('sim-emb').requests).toBe(2);
  });

  it.each([401, 429, 500])('an upstream %i (the endpoint’s failure) still counts: the next request finds no healthy endpoint (503)', async (status) => {
    env.sim.setKnobs('sim-emb', { errorStatus: status, failTimes: 1, retryAfter: 1 });
    expect((await ask()).status).not.toBe(200);
    const next = await ask();
    expect(next.status).toBe(503);
    expect(env.sim.stats('sim-emb').requests).toBe(1);
  });
});
