/** Durable jobs: restart recovery (graceful and crash) and several instances on one database, on both backends. */
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/sql-store.js';
import { BACKENDS } from '../helpers.js';
import { startVideoEnv, until, upstreamCreates, waitForJob, type VideoEnv } from './util.js';

async function withEnv(backend: (typeof BACKENDS)[number], env: Record<string, string>, fn: (e: VideoEnv) => Promise<void>): Promise<void> {
  const e = await startVideoEnv(backend, { env });
  try {
    await fn(e);
  } finally {
    await e.close();
  }
}

const createsFor = (e: VideoEnv, prompt: string) => upstreamCreates(e.sim).filter((r) => JSON.stringify(r.body).includes(prompt)).length;

describe.each(BACKENDS)('video worker across restarts and instances (%s)', (backend) => {
  it('resumes a job after a restart: the new gateway polls the upstream job and never submits it again', () =>
    withEnv(backend, {}, async (e) => {
      e.sim.setKnobs('sim-veo', { videoJobMs: 2500 });
      const res = await e.call('POST', '/videos', { body: { model: 'test/veo', prompt: 'restart: graceful' } });
      expect(res.status).toBe(202);
      const id = res.body.id as string;
      await until(async () => Boolean((await e.t.gw.svc.store.getVideoJob(id))?.upstream_id), 5000, 'submission');
      expect((await e.call('GET', `/videos/${id}`)).body.status).toBe('in_progress');

      // Graceful stop in the middle of the job: the worker gives its leases back.
      const first = e.t.gw.svc.videos.owner;
      await e.t.stop();
      const db = openStore(e.t.databaseUrl);
      const row = (await db.getVideoJob(id))!;
      await db.close();
      expect(row.status).toBe('in_progress');
      expect(row.lease_owner).toBeNull(); // free at once, not after the lease time
      expect(first).toBeTruthy();
      const b = await e.another();

      const { job } = await waitForJob(b, e.key, id);
      expect(job.status).toBe('completed');
      expect(job.generation_id).toBe(row.generation_id);
      expect(job.usage).toEqual({ cost: 1.2, is_byok: false });
      expect(createsFor(e, 'restart: graceful')).toBe(1);
      // The bytes are still served, by the new instance.
      const content = await fetch(`${b.url}${job.unsigned_urls[0]}`, { headers: { authorization: `Bearer ${e.key}` } });
      expect(content.status).toBe(200);
      expect(Buffer.from(await content.arrayBuffer()).subarray(4, 8).toString()).toBe('ftyp');
    }));

  it('takes over the jobs of a crashed instance once their lease expires', () =>
    withEnv(backend, { GATEWAY_VIDEO_LEASE_MS: '1000' }, async (e) => {
      e.sim.setKnobs('sim-ov', { videoJobMs: 200 });
      const res = await e.call('POST', '/videos', { body: { model: 'test/sora', prompt: 'restart: crash' } });
      const id = res.body.id as string;
      await until(async () => Boolean((await e.t.gw.svc.store.getVideoJob(id))?.upstream_id), 5000, 'submission');
      const crashed = e.t.gw.svc.videos.owner;
      // A crash: the worker stops dead and its lease stays in the database.
      await e.t.gw.svc.videos.stop({ release: false });
      await e.t.stop();

      // The new instance's passes are run by hand here, to look at the job before and after the lease expires.
      const b = await e.another({ GATEWAY_VIDEO_WORKER: 'false' });
      const held = (await b.gw.svc.store.getVideoJob(id))!;
      expect(held.lease_owner).toBe(crashed);
      const leaseEnd = Date.parse(held.lease_until!);
      if (Date.now() < leaseEnd - 100) {
        await b.gw.svc.videos.tick();
        const row = (await b.gw.svc.store.getVideoJob(id))!;
        if (Date.now() < leaseEnd) {
          expect(row.lease_owner).toBe(crashed); // while the lease holds, the job is left alone
          expect(row.status).toBe('in_progress');
        }
      }
      await new Promise((r) => setTimeout(r, Math.max(0, leaseEnd - Date.now() + 20)));
      await until(async () => {
        await b.gw.svc.videos.tick();
        return (await b.gw.svc.store.getVideoJob(id))!.status === 'completed';
      }, 5000, 'completion by the new instance');
      const { job } = await waitForJob(b, e.key, id);
      expect(job.status).toBe('completed');
      expect(b.gw.svc.videos.owner).not.toBe(crashed);
      expect(createsFor(e, 'restart: crash')).toBe(1);
    }));

  it('finishes a pending job created by an instance that drives no jobs', () =>
    withEnv(backend, { GATEWAY_VIDEO_WORKER: 'false' }, async (e) => {
      const res = await e.call('POST', '/videos', { body: { model: 'test/sora', prompt: 'restart: pending' } });
      const id = res.body.id as string;
      await new Promise((r) => setTimeout(r, 100));
      expect((await e.call('GET', `/videos/${id}`)).body.status).toBe('pending');
      const worker = await e.another({ GATEWAY_VIDEO_WORKER: 'true' });
      const { job } = await waitForJob(e.t, e.key, id); // polled through the first instance
      expect(job.status).toBe('completed');
      expect(createsFor(e, 'restart: pending')).toBe(1);
      await worker.stop();
    }));

  it('with two instances on one database, every job is driven by exactly one (one upstream submission per job)', () =>
    withEnv(backend, {}, async (e) => {
      const b = await e.another();
      e.sim.setKnobs('sim-ov', { videoJobMs: 150 });
      e.sim.setKnobs('sim-veo', { videoJobMs: 150 });
      const gateways = [e.t, b];
      const ids: string[] = [];
      const jobs = Array.from({ length: 12 }, (_, i) => ({ model: i % 2 === 0 ? 'test/sora' : 'test/veo', prompt: `pair job #${i}#` }));
      const created = await Promise.all(jobs.map((body, i) => gateways[i % 2].call('POST', '/videos', { key: e.key, body })));
      for (const r of created) {
        expect(r.status).toBe(202);
        ids.push(r.body.id);
      }
      const done = await Promise.all(ids.map((id, i) => waitForJob(gateways[(i + 1) % 2], e.key, id)));
      for (const { job } of done) expect(job.status).toBe('completed');
      for (let i = 0; i < jobs.length; i++) expect(createsFor(e, `pair job #${i}#`), `job ${i}`).toBe(1);
      expect(upstreamCreates(e.sim).filter((r) => JSON.stringify(r.body).includes('pair job')).length).toBe(jobs.length);
      const generations = new Set(done.map((d) => d.job.generation_id));
      expect(generations.size).toBe(jobs.length);
      await b.stop();
    }));
});
