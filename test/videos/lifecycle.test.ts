/**
 * Every state and every allowed transition, one worker pass at a time: the gateway runs without its worker loop
 * (GATEWAY_VIDEO_WORKER=false) and the test runs `tick()` itself, so each state can be observed.
 * The gateway's clock is the test's: a job's deadline is passed by moving that clock forward (`passDeadline`), so the
 * expiry tests take no real time and the other jobs, whose deadline is far away, never expire on a slow machine (with
 * a real 800 ms deadline, a loaded machine expired jobs that were meant to complete).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers.js';
import { startVideoEnv, upstreamCreates, type VideoEnv } from './util.js';

const TIMEOUT_MS = 60_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(BACKENDS)('video job states, one worker pass at a time (%s)', (backend) => {
  let env: VideoEnv;
  /** How far the gateway's clock is ahead of the real one. */
  let ahead = 0;
  /** Moves the gateway's clock past the deadline of every job created so far. */
  const passDeadline = () => void (ahead += TIMEOUT_MS + 50);

  beforeAll(async () => {
    env = await startVideoEnv(backend, {
      env: { GATEWAY_VIDEO_WORKER: 'false', GATEWAY_VIDEO_JOB_TIMEOUT_MS: String(TIMEOUT_MS) },
      gateway: { now: () => Date.now() + ahead },
    });
  });
  afterAll(async () => {
    await env?.close();
  });
  beforeEach(() => {
    env.sim.resetKnobs();
  });

  const videos = () => env.t.gw.svc.videos;
  const store = () => env.t.gw.svc.store;
  const get = async (id: string) => (await env.call('GET', `/videos/${id}`)).body;
  const create = async (body: Record<string, unknown>) => {
    const res = await env.call('POST', '/videos', { body });
    expect(res.status).toBe(202);
    return res.body.id as string;
  };
  const createsFor = (prompt: string) => upstreamCreates(env.sim).filter((r) => JSON.stringify(r.body).includes(prompt)).length;
  /** Runs passes until `done` or the time is up. */
  const tickUntil = async (id: string, done: (j: any) => boolean, ms = 3000) => {
    const end = Date.now() + ms;
    for (;;) {
      await videos().tick();
      const j = await get(id);
      if (done(j)) return j;
      if (Date.now() > end) throw new Error(`job still ${j.status}`);
      await sleep(20);
    }
  };

  it('pending → in_progress → completed, each state with its own fields', async () => {
    env.sim.setKnobs('sim-veo', { videoJobMs: 300 });
    const createdAt = Date.now();
    const id = await create({ model: 'test/veo', prompt: 'steps: complete' });

    // pending: stored, nothing else yet (no worker has run).
    const pending = await get(id);
    expect(pending).toEqual({ id, polling_url: `/api/v1/videos/${id}`, status: 'pending' });
    const row0 = (await store().getVideoJob(id))!;
    expect(row0).toMatchObject({ status: 'pending', upstream_id: null, generation_id: null, lease_owner: null });

    // One pass: picked up (generation id), submitted upstream once.
    await videos().tick();
    const running = await get(id);
    expect(running.status).toBe('in_progress');
    expect(running.generation_id).toMatch(/^gen-/);
    expect(running.usage).toBeUndefined();
    expect(running.unsigned_urls).toBeUndefined();
    const row1 = (await store().getVideoJob(id))!;
    expect(row1.upstream_id).toMatch(/^models\/veo-sim\/operations\//);
    expect(row1.lease_owner).toBe(videos().owner);
    expect(createsFor('steps: complete')).toBe(1);

    // Polled while the upstream job runs: still in progress, same generation (checked only if this machine was quick
    // enough for the upstream job to be still running).
    await sleep(40);
    await videos().tick();
    const polled = await get(id);
    if (Date.now() - createdAt < 250) expect(polled).toMatchObject({ status: 'in_progress', generation_id: running.generation_id });
    else expect(polled.generation_id).toBe(running.generation_id);

    const done = await tickUntil(id, (j) => j.status === 'completed');
    expect(done.generation_id).toBe(running.generation_id);
    expect(done.usage).toEqual({ cost: 1.2, is_byok: false });
    expect(done.unsigned_urls).toHaveLength(1);
    expect(createsFor('steps: complete')).toBe(1);
    const row2 = (await store().getVideoJob(id))!;
    expect(row2.lease_owner).toBeNull(); // nothing left to do: the lease is given back
    expect(row2.finished_at).not.toBeNull();
    expect(row2.content_refs).toEqual([{ kind: 'google-veo', uri: expect.stringMatching(/\/sim-veo\/v1beta\/files\/.+:download\?alt=media$/) }]);
  });

  it('in_progress → failed', async () => {
    env.sim.setKnobs('sim-ov', { videoJobMs: 50, videoFail: 'upstream said no' });
    const id = await create({ model: 'test/sora', prompt: 'steps: fail' });
    await videos().tick();
    expect((await get(id)).status).toBe('in_progress');
    const failed = await tickUntil(id, (j) => j.status !== 'in_progress');
    expect(failed).toMatchObject({ status: 'failed', error: 'upstream said no', generation_id: expect.stringMatching(/^gen-/) });
    expect(failed.usage).toBeUndefined();
  });

  it('in_progress → expired: the upstream job outlived the deadline', async () => {
    env.sim.setKnobs('sim-ov', { videoJobMs: 60_000 });
    const id = await create({ model: 'test/sora', prompt: 'steps: expire' });
    await videos().tick();
    expect((await get(id)).status).toBe('in_progress');
    passDeadline();
    await videos().tick();
    const expired = await get(id);
    expect(expired.status).toBe('expired');
    expect(expired.generation_id).toMatch(/^gen-/);
    expect(expired.usage).toBeUndefined();
    expect((await store().getVideoJob(id))!.error).toMatch(/did not finish within/);
    const gen = await env.call('GET', `/generation?id=${expired.generation_id}`);
    expect(gen.body.data).toMatchObject({ finish_reason: 'expired', status: 524, total_cost: 0 });
  });

  it('pending → in_progress → expired in one pass when no worker took the job in time (never submitted)', async () => {
    const id = await create({ model: 'test/sora', prompt: 'steps: expire pending' });
    passDeadline();
    await videos().tick();
    const expired = await get(id);
    expect(expired.status).toBe('expired');
    expect(expired.generation_id).toMatch(/^gen-/);
    expect(createsFor('steps: expire pending')).toBe(0);
  });

  it('pending → cancelled (through in_progress, in one transaction): never submitted', async () => {
    const id = await create({ model: 'test/sora', prompt: 'steps: cancel pending' });
    const res = await env.call('POST', `/videos/${id}/cancel`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'cancelled', generation_id: expect.stringMatching(/^gen-/) });
    await videos().tick();
    expect((await get(id)).status).toBe('cancelled');
    expect(createsFor('steps: cancel pending')).toBe(0);
  });

  it("in_progress → cancelled: the worker's later update loses", async () => {
    env.sim.setKnobs('sim-ov', { videoJobMs: 100 });
    const id = await create({ model: 'test/sora', prompt: 'steps: cancel running' });
    await videos().tick();
    expect((await get(id)).status).toBe('in_progress');
    // A worker read the job just before the caller cancelled it…
    const stale = (await store().getVideoJob(id))!;
    expect((await env.call('POST', `/videos/${id}/cancel`)).body.status).toBe('cancelled');
    await sleep(150);
    // …its conditional transition (in_progress → completed) finds the job cancelled and changes nothing.
    expect(await store().transitionVideoJob(stale.id, ['in_progress', 'completed'], { cost: 1 })).toBe(false);
    await videos().tick();
    const after = await get(id);
    expect(after.status).toBe('cancelled');
    expect(after.usage).toBeUndefined();
  });

  it('retries a submission that fails transiently, then gives up (failed)', async () => {
    env.sim.setKnobs('sim-ov', { errorStatus: 503 });
    const id = await create({ model: 'test/sora', prompt: 'steps: retry submit' });
    const failed = await tickUntil(id, (j) => j.status === 'failed');
    expect(failed.error).toMatch(/^Provider returned error: /);
    expect(createsFor('steps: retry submit')).toBe(3); // the first round and two retries
    const gen = await env.call('GET', `/generation?id=${failed.generation_id}`);
    expect(gen.body.data.provider_responses).toHaveLength(3);
  });

  it('a transient submission failure does not fail the job when a retry succeeds', async () => {
    env.sim.setKnobs('sim-ov', { errorStatus: 500, failTimes: 1 });
    const id = await create({ model: 'test/sora', prompt: 'steps: retry then ok' });
    const done = await tickUntil(id, (j) => j.status === 'completed');
    expect(done.usage.cost).toBeCloseTo(0.4, 10); // default 4 s × $0.10
    expect(createsFor('steps: retry then ok')).toBe(2);
  });
});
