/**
 * Video jobs against the key's spending limit: a job holds the most it can bill while it runs, so that a burst of
 * jobs cannot pass one check together, and what it holds counts for the key's other requests (chat) too.
 */
import { describe, expect, it } from 'vitest';
import { BACKENDS, createInferenceKey, REDIS_URL } from '../helpers.js';
import { videoEnvFor, waitForJob } from './util.js';

const HOLD = { videoJobMs: 60_000 }; // jobs that stay in progress until cancelled

describe.each(BACKENDS)('video jobs and spending limits (%s)', (backend) => {
  const env = videoEnvFor(backend);

  const create = (key: string, body: Record<string, unknown>) => env.t.call('POST', '/videos', { key, body: { model: 'test/veo', prompt: 'a fox', ...body } });
  const cancelAll = async (key: string, ids: string[]) => {
    for (const id of ids) await env.t.call('POST', `/videos/${id}/cancel`, { key });
  };

  it('refuses a job that could bill more than what is left (402 with what it would cost), and takes one that fits', async () => {
    env.sim.setKnobs('sim-veo', HOLD);
    const k = await createInferenceKey(env.t, { name: `fit ${backend}`, limit: 1 });
    // test/veo: 8 s by default at $0.15/s = $1.20 > $1.
    const big = await create(k.key, {});
    expect(big.status).toBe(402);
    expect(big.body.error.message).toMatch(/^Key limit would be exceeded: this video can cost up to \$1\.200000/);
    expect(big.body.error.metadata).toMatchObject({ error_type: 'payment_required', limit: 1, spent: 0, reserve: 1.2 });
    // 4 s: $0.60 (4K would be $1.40: the hold follows the requested resolution).
    expect((await create(k.key, { duration: 4, resolution: '4K' })).status).toBe(402);
    const small = await create(k.key, { duration: 4 });
    expect(small.status).toBe(202);
    expect((await env.t.gw.svc.store.getVideoJob(small.body.id))!.reserved_cost).toBeCloseTo(0.6, 10);
    // What the running job holds counts: another $0.60 would pass the limit.
    const second = await create(k.key, { duration: 4 });
    expect(second.status).toBe(402);
    expect(second.body.error.metadata.spent).toBeCloseTo(0.6, 10);
    await cancelAll(k.key, [small.body.id]);
  });

  it('admits exactly as many jobs of a concurrent burst as the limit covers', async () => {
    env.sim.setKnobs('sim-veo', HOLD);
    const k = await createInferenceKey(env.t, { name: `burst ${backend}`, limit: 2.5 });
    const all = await Promise.all(Array.from({ length: 12 }, (_, i) => create(k.key, { duration: 4, prompt: `burst ${i}` })));
    const accepted = all.filter((r) => r.status === 202);
    expect(accepted.length).toBe(4); // 4 × $0.60 = $2.40 ≤ $2.50; a fifth would make $3.00
    expect(all.filter((r) => r.status === 402).length).toBe(8);
    await cancelAll(k.key, accepted.map((r) => r.body.id));
  });

  it("a running job's hold counts for chat too, and ends with the job (a cancelled job costs nothing)", async () => {
    env.sim.setKnobs('sim-veo', HOLD);
    const k = await createInferenceKey(env.t, { name: `chat ${backend}`, limit: 0.6 });
    const chat = () => env.t.call('POST', '/chat/completions', { key: k.key, body: { model: 'test/chat', messages: [{ role: 'user', content: 'hi' }] } });
    expect((await chat()).status).toBe(200);
    const job = await create(k.key, { duration: 4 }); // $0.60 held: exactly the limit (the chat above cost a fraction of a cent)
    expect(job.status).toBe(402);
    const k2 = await createInferenceKey(env.t, { name: `chat2 ${backend}`, limit: 0.6 });
    const chat2 = () => env.t.call('POST', '/chat/completions', { key: k2.key, body: { model: 'test/chat', messages: [{ role: 'user', content: 'hi' }] } });
    const held = await create(k2.key, { duration: 4 });
    expect(held.status).toBe(202);
    const refused = await chat2();
    expect(refused.status).toBe(402);
    expect(refused.body.error.metadata.spent).toBeCloseTo(0.6, 10);
    await cancelAll(k2.key, [held.body.id]);
    expect((await chat2()).status).toBe(200);
  });

  it('once a job completes, its real cost counts instead of its hold', async () => {
    env.sim.setKnobs('sim-veo', { videoJobMs: 100 });
    env.sim.setKnobs('sim-ov', { videoJobMs: 100 });
    const k = await createInferenceKey(env.t, { name: `done ${backend}`, limit: 1 });
    const first = await create(k.key, { duration: 4 });
    expect(first.status).toBe(202);
    const { job } = await waitForJob(env.t, k.key, first.body.id);
    expect(job.status).toBe('completed');
    expect(job.usage.cost).toBeCloseTo(0.6, 10);
    // $0.60 spent: another $0.60 job would pass $1; a $0.40 one (test/sora, 4 s at $0.10) fits exactly.
    expect((await create(k.key, { duration: 4 })).status).toBe(402);
    const sora = await create(k.key, { model: 'test/sora', duration: 4 });
    expect(sora.status).toBe(202);
    expect((await waitForJob(env.t, k.key, sora.body.id)).job.status).toBe('completed');
    const after = await create(k.key, { model: 'test/sora', duration: 4 });
    expect(after.status).toBe(402);
    expect(after.body.error.message).toMatch(/^Key limit reached/);
  });

  it('a key without a limit is not held back, and budgets count what jobs hold', async () => {
    env.sim.setKnobs('sim-veo', HOLD);
    const free = await createInferenceKey(env.t, { name: `free ${backend}` });
    const jobs = await Promise.all([0, 1, 2].map(() => create(free.key, {})));
    expect(jobs.map((r) => r.status)).toEqual([202, 202, 202]);
    await cancelAll(free.key, jobs.map((r) => r.body.id));
  });
});

describe('video jobs and spending limits across two instances (PostgreSQL + Redis)', () => {
  const env = videoEnvFor('postgres', { env: { GATEWAY_REDIS_URL: REDIS_URL } });

  it('a burst split over both instances admits exactly as many jobs as the limit covers', async () => {
    env.sim.setKnobs('sim-veo', HOLD);
    const b = await env.another({ GATEWAY_REDIS_URL: REDIS_URL });
    const k = await createInferenceKey(env.t, { name: 'two instances', limit: 2.5 });
    const body = (i: number) => ({ model: 'test/veo', prompt: `split ${i}`, duration: 4 });
    const all = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? b : env.t).call('POST', '/videos', { key: k.key, body: body(i) })));
    const accepted = all.filter((r) => r.status === 202);
    expect(accepted.length).toBe(4);
    // What one instance admitted holds on the other too, for chat as well.
    const chat = await b.call('POST', '/chat/completions', { key: k.key, body: { model: 'test/chat', messages: [{ role: 'user', content: 'hi' }] } });
    expect(chat.status).toBe(200); // $2.40 held of $2.50
    for (const r of accepted) await env.t.call('POST', `/videos/${r.body.id}/cancel`, { key: k.key });
    const again = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? env.t : b).call('POST', '/videos', { key: k.key, body: body(100 + i) })));
    expect(again.filter((r) => r.status === 202).length).toBe(4);
    for (const r of again.filter((x) => x.status === 202)) await b.call('POST', `/videos/${r.body.id}/cancel`, { key: k.key });
  });
});
