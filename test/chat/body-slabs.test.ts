/**
 * Issue 18: large bodies read into reused slabs (core/body-slabs.ts). Bodies of concurrent requests never mix, also
 * when the slabs are reused from one round to the next; a client that goes away leaves no slab held; a fallback
 * resends the same bytes; I/O logging still reads the conversation after the answer.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { freeSlabs, SLAB_BYTES, slabStats } from '../../src/core/body-slabs.js';
import type { Json } from './util.js';

let env: ChatEnv;
beforeAll(async () => {
  // A model whose context takes a ~600 KB conversation, on two providers (sim-a first: the cheaper).
  const price = { prompt: '0.0000001', completion: '0.0000002' };
  env = await startChatEnv('sqlite', {
    catalog: {
      models: [{ id: 'test/long', name: 'Test Long', context_length: 1_000_000 }],
      endpoints: [
        { model: 'test/long', provider: 'sim-a', upstream_model: 'long-a', pricing: price, supported_parameters: ['temperature'] },
        { model: 'test/long', provider: 'sim-b', upstream_model: 'long-b', pricing: { prompt: '0.0000002', completion: '0.0000004' }, supported_parameters: ['temperature'] },
      ],
    },
  });
});
afterAll(async () => env?.close());
beforeEach(() => {
  env.sim.resetKnobs();
  env.sim.resetStats();
});

/** ~600 KB of turns, every one of them naming `tag` (the upstream's answer is seeded by the whole last user text). */
function conversation(tag: string): Array<{ role: string; content: string }> {
  const text = (i: number) => `${tag} ${i} ` + `lorem ${tag} ipsum dolor sit amet `.repeat(120);
  return Array.from({ length: 151 }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: text(i) }));
}

/** sim-a first whatever latencies earlier requests left (the default order weighs them). */
const ORDER = { order: ['sim-a', 'sim-b'] };

async function post(path: string, body: Json) {
  const res = await env.t.call('POST', path, { key: env.key, raw: JSON.stringify({ provider: ORDER, ...body }) });
  return { status: res.status, json: res.body as Json };
}

const answer = (r: { json: Json }) => JSON.stringify((r.json.choices as Json[])?.[0]?.message ?? r.json);

describe('bodies in slabs', () => {
  it('of 16 concurrent requests never mix, over three rounds reusing the slabs', async () => {
    const tags = Array.from({ length: 16 }, (_, i) => `t${i}x${'q'.repeat(i)}`);
    // Alone first: each body's answer (the simulator seeds it from the whole last user text).
    const alone: string[] = [];
    for (const tag of tags) alone.push(answer(await post('/chat/completions', { model: 'test/long', messages: conversation(tag) })));
    expect(new Set(alone).size).toBe(16);
    const made = slabStats.made;
    const perBody = Math.ceil(JSON.stringify({ provider: ORDER, model: 'test/long', messages: conversation(tags[15]) }).length / SLAB_BYTES);
    env.sim.setKnobs('sim-a', { latencyMs: 150 });
    for (let round = 0; round < 3; round++) {
      const rs = await Promise.all(tags.map((tag) => post('/chat/completions', { model: 'test/long', messages: conversation(tag) })));
      rs.forEach((r, i) => {
        expect(r.status).toBe(200);
        expect(answer(r)).toBe(alone[i]);
      });
    }
    // Three rounds of 16 bodies: at most 16 bodies' slabs are made, the rest reused.
    expect(slabStats.made - made).toBeLessThanOrEqual(16 * perBody);
    expect(slabStats.reused).toBeGreaterThanOrEqual(2 * 16 * perBody);
    expect(slabStats.reused).toBeGreaterThan(0);
  });

  it('a client that goes away leaves no slab held, and the next body is whole', async () => {
    env.sim.setKnobs('sim-a', { latencyMs: 1500 });
    env.sim.setKnobs('sim-b', { latencyMs: 1500 });
    const arrived = () => env.sim.stats('sim-a').requests + env.sim.stats('sim-b').requests;
    const held = () => slabStats.made - slabStats.dropped - freeSlabs();
    const before = held();
    const ac = new AbortController();
    const url = `${env.t.api}/chat/completions`;
    const sent = request(url, { method: 'POST', signal: ac.signal, headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/long', provider: ORDER, messages: conversation('gone') }) }).catch(() => null);
    // Aborted once the upstream has the body (its answer is 1.5 s away).
    for (let i = 0; i < 100 && arrived() === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(arrived()).toBe(1);
    expect(held()).toBeGreaterThan(before);
    ac.abort();
    await sent;
    for (let i = 0; i < 100 && held() > before; i++) await new Promise((r) => setTimeout(r, 20));
    expect(held()).toBe(before);
    env.sim.resetKnobs();
    const messages = conversation('after');
    expect((await post('/chat/completions', { model: 'test/long', messages })).status).toBe(200);
    expect(((env.sim.stats('sim-a').lastBody ?? env.sim.stats('sim-b').lastBody) as Json).messages).toEqual(messages);
  });

  it('a fallback resends the same bytes', async () => {
    env.sim.setKnobs('sim-a', { errorStatus: 503 });
    const messages = conversation('fallback');
    const r = await post('/chat/completions', { model: 'test/long', messages });
    expect(r.status).toBe(200);
    expect(env.sim.stats('sim-a').requests).toBe(1);
    expect((env.sim.stats('sim-b').lastBody as Json).messages).toEqual(messages);
  });
  it('logged (I/O logging), keeps its bytes for the content written after the answer, while other bodies take slabs', async () => {
    const wsId = (await env.t.gw.svc.store.getDefaultWorkspace())!.id;
    const settings = (patch: Record<string, unknown>) => env.t.call('PATCH', `/workspaces/${wsId}`, { body: patch });
    expect((await settings({ is_observability_io_logging_enabled: true, io_logging_sampling_rate: 1, io_logging_api_key_ids: null })).status).toBe(200);
    try {
      const messages = conversation('logged');
      const first = await post('/chat/completions', { model: 'test/long', messages });
      expect(first.status).toBe(200);
      // Before the content is written: more large bodies, which would take the logged body's slabs were they given back.
      for (const tag of ['o1', 'o2', 'o3']) expect((await post('/chat/completions', { model: 'test/long', messages: conversation(tag) })).status).toBe(200);
      await env.t.gw.svc.recorder.flush();
      const res = await env.t.call('GET', `/generation/content?id=${encodeURIComponent(first.json.id as string)}`);
      expect(res.status).toBe(200);
      // A long input is stored as the start of its text (a prompt): this body's, none of the later ones'.
      const stored = JSON.stringify(res.body.data.input);
      expect(stored).toContain(messages[0].content.slice(0, 300));
      expect(stored).not.toMatch(/o[123] \d/);
    } finally {
      await settings({ is_observability_io_logging_enabled: false });
    }
  });
});
