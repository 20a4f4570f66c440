/**
 * The attack (docs/spend.md): 500 concurrent chat requests against a key limit with room for exactly N
 * requests of known cost — a new key each run, upstream latency 300 ms so that every request is admitted or refused
 * before any has ended: exactly N succeed, the rest get 402, recorded spend ≤ the limit; 5 runs. One instance on
 * SQLite; two instances on one PostgreSQL and one Redis.
 * Cost: test/exact bills completion only ($0.000002 × 12 tokens = $0.000024) and the request asks for max_tokens 12,
 * so the reserved maximum is the real cost.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createSimulator, type Simulator } from '../../src/sim/index.js';
import { simCatalog } from '../chat-helpers.js';
import { createInferenceKey, startGateway, startTwoInstances, type TestGateway } from '../helpers.js';

const N = 20;
const COST = 0.000024;
const LIMIT = 0.00048; // N × COST
const CONCURRENT = 500;

const exact = {
  models: [{ id: 'test/exact', name: 'Test Exact', context_length: 32000 }],
  endpoints: [{ model: 'test/exact', provider: 'sim-a', upstream_model: 'alpha-a', pricing: { prompt: '0', completion: '0.000002' }, supported_parameters: ['max_tokens'] }],
};

async function attack(instances: TestGateway[], key: string): Promise<Map<number, number>> {
  const statuses = await Promise.all(
    Array.from({ length: CONCURRENT }, (_, i) =>
      instances[i % instances.length].call('POST', '/chat/completions', { key, body: { model: 'test/exact', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 12 } }).then((r) => {
        if (r.status === 200) expect(r.body.usage.cost).toBe(COST);
        return r.status;
      }),
    ),
  );
  const out = new Map<number, number>();
  for (const s of statuses) out.set(s, (out.get(s) ?? 0) + 1);
  return out;
}

describe('500 concurrent requests against room for exactly 20', () => {
  let sim: Simulator;
  let file: string;
  beforeAll(async () => {
    sim = await createSimulator();
    file = join(mkdtempSync(join(tmpdir(), 'gw-spend-')), 'gateway.yaml');
    writeFileSync(file, stringify(simCatalog(sim.url, exact)));
    sim.setKnobs('sim-a', { latencyMs: 300 });
  });
  afterAll(async () => sim?.close());

  it('one instance (SQLite): exactly 20 admitted, spend ≤ the limit, 5 times', { timeout: 180_000 }, async () => {
    const t = await startGateway('sqlite', { env: { GATEWAY_CONFIG: file, GATEWAY_DEFAULT_CATALOG: 'false' } });
    try {
      for (let run = 0; run < 5; run++) {
        const k = await createInferenceKey(t, { name: `attack-${run}`, limit: LIMIT });
        const counts = await attack([t], k.key);
        expect(Object.fromEntries(counts)).toEqual({ 200: N, 402: CONCURRENT - N });
        await t.gw.svc.recorder.flush();
        const view = (await t.call('GET', `/keys/${k.hash}`)).body.data;
        expect(view.usage).toBe(LIMIT);
        expect(view.limit_remaining).toBe(0);
      }
    } finally {
      await t.close();
    }
  });

  it('two instances (PostgreSQL + Redis): exactly 20 admitted across both, spend ≤ the limit, 5 times', { timeout: 240_000 }, async () => {
    const { a, b, close } = await startTwoInstances({ GATEWAY_CONFIG: file, GATEWAY_DEFAULT_CATALOG: 'false' });
    try {
      for (let run = 0; run < 5; run++) {
        const k = await createInferenceKey(a, { name: `attack-${run}`, limit: LIMIT });
        const counts = await attack([a, b], k.key);
        expect(Object.fromEntries(counts)).toEqual({ 200: N, 402: CONCURRENT - N });
        await Promise.all([a.gw.svc.recorder.flush(), b.gw.svc.recorder.flush()]);
        const view = (await a.call('GET', `/keys/${k.hash}`)).body.data;
        expect(view.usage).toBe(LIMIT);
      }
    } finally {
      await close();
    }
  });
});
