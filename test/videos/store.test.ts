/** The store's video job methods on both databases: conditional transitions, leases, durable fields. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type SqlStore } from '../../src/store/sql-store.js';
import type { VideoJobRow } from '../../src/store/types.js';
import { IllegalTransitionError, VIDEO_STATUSES, type VideoStatus } from '../../src/core/video-states.js';
import { BACKENDS, freshDatabase } from '../helpers.js';

let seq = 0;
function job(over: Partial<VideoJobRow> = {}): VideoJobRow {
  const now = new Date().toISOString();
  return {
    id: `job-store-${++seq}-${Math.random().toString(36).slice(2, 8)}`,
    workspace_id: 'ws-1',
    key_hash: 'k'.repeat(64),
    model: 'test/veo',
    provider: null,
    endpoint_tag: null,
    upstream_id: null,
    status: 'pending',
    request_body: {
      request_id: 'req-1',
      prompt: 'a cat',
      duration: 8,
      resolution: null,
      aspect_ratio: null,
      size: null,
      frame_images: [],
      input_references: [],
      generate_audio: null,
      seed: null,
      provider_options: {},
      candidates: [{ model: 'test/veo', tag: 'sim-veo' }],
      attempt: null,
      attempts: [],
    },
    error: null,
    generation_id: null,
    cost: null,
    reserved_cost: null,
    is_byok: false,
    byok_credential_id: null,
    content_refs: null,
    seconds: null,
    callback_url: null,
    webhook_state: 'none',
    webhook_attempts: 0,
    webhook_next_at: null,
    webhook_last_error: null,
    lease_owner: null,
    lease_until: null,
    next_poll_at: null,
    poll_errors: 0,
    deadline_at: new Date(Date.now() + 3_600_000).toISOString(),
    submitted_at: null,
    finished_at: null,
    created_at: now,
    updated_at: now,
    ...over,
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

describe.each(BACKENDS)('video job store (%s)', (backend) => {
  let store: SqlStore;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const db = await freshDatabase(backend);
    drop = db.drop;
    store = openStore(db.url);
    await store.migrate();
  });
  afterAll(async () => {
    await store.close();
    await drop();
  });

  /** A stored job in `status`, reached through allowed transitions. */
  async function jobIn(status: VideoStatus, over: Partial<VideoJobRow> = {}): Promise<VideoJobRow> {
    const row = job(over);
    await store.insertVideoJob(row);
    if (status === 'in_progress') expect(await store.transitionVideoJob(row.id, ['pending', 'in_progress'], {})).toBe(true);
    else if (status !== 'pending') expect(await store.transitionVideoJob(row.id, ['pending', 'in_progress', status], {})).toBe(true);
    return (await store.getVideoJob(row.id))!;
  }

  it('stores a job and reads it back with its JSON, boolean and timestamp fields', async () => {
    const row = job({ callback_url: 'https://example.com/hook', content_refs: [{ kind: 'google-veo', uri: 'https://x/y' }], cost: 1.25, is_byok: false, error: 'boom' });
    await store.insertVideoJob(row);
    const back = await store.getVideoJob(row.id);
    expect(back).toEqual(row);
    expect(await store.getVideoJob('job-missing')).toBeNull();
    // Migration 0019: the BYOK credential that submitted a job (its id only).
    const onByok = job({ is_byok: true, byok_credential_id: '0b9c6f5e-2d4a-4c1e-9f7a-5d3b2a1c0e9f' });
    await store.insertVideoJob(onByok);
    expect(await store.getVideoJob(onByok.id)).toEqual(onByok);
    await store.updateVideoJob(onByok.id, { byok_credential_id: null, is_byok: false }, { status: 'pending' });
    expect((await store.getVideoJob(onByok.id))!.byok_credential_id).toBeNull();
  });

  it('sums what unfinished jobs reserve, per key (ended jobs and jobs without a price hold nothing)', async () => {
    const a = `a${backend}`.padEnd(64, '1');
    const b = `b${backend}`.padEnd(64, '2');
    await jobIn('pending', { key_hash: a, reserved_cost: 0.6 });
    await jobIn('in_progress', { key_hash: a, reserved_cost: 1.2 });
    await jobIn('pending', { key_hash: a, reserved_cost: null });
    for (const ended of ['completed', 'failed', 'cancelled', 'expired'] as const) await jobIn(ended, { key_hash: a, reserved_cost: 5 });
    await jobIn('pending', { key_hash: b, reserved_cost: 0.25 });
    const got = await store.videoReservations([a, b, 'c'.repeat(64)]);
    expect([...got.keys()].sort()).toEqual([a, b].sort());
    expect(got.get(a)).toBeCloseTo(1.8, 10);
    expect(got.get(b)).toBeCloseTo(0.25, 10);
    expect((await store.videoReservations([])).size).toBe(0);
  });

  it.runIf(backend === 'postgres')('runs one holder of a key lock at a time (each call holds it on a connection of its own)', async () => {
    const order: string[] = [];
    const hold = (name: string, ms: number) =>
      store.withKeyLock('k'.repeat(64), async () => {
        order.push(`${name}+`);
        await new Promise((r) => setTimeout(r, ms));
        order.push(`${name}-`);
        return name;
      });
    expect(await Promise.all([hold('a', 60), hold('b', 30), hold('c', 10)])).toEqual(['a', 'b', 'c']);
    // No two holders overlap: every start is directly followed by its own end.
    for (let i = 0; i < order.length; i += 2) expect(order[i + 1]).toBe(order[i].replace('+', '-'));
    // Many keys at once, each running queries of its own while it holds its lock: the pool's connections are not all
    // taken by lock holders (which would leave none for those queries).
    const many = await Promise.all(
      Array.from({ length: 24 }, (_, i) => store.withKeyLock(`key-${i}`.padEnd(64, 'x'), async () => (await store.videoReservations([`key-${i}`])).size)),
    );
    expect(many).toEqual(Array.from({ length: 24 }, () => 0));
    // A different key is not held up: taken while the first key's lock is held, its holder runs before that lock is
    // given back. (Were it held up, it would run only once the first holder gave up waiting for it, 10 s later.) This
    // was a bound of 60 ms on the wait, which a loaded machine exceeded without anything waiting for a lock.
    const seen: string[] = [];
    let other: Promise<unknown> = Promise.resolve();
    await store.withKeyLock('k'.repeat(64), async () => {
      seen.push('k+');
      other = store.withKeyLock('z'.repeat(64), async () => seen.push('z'));
      await Promise.race([other, new Promise((r) => setTimeout(r, 10_000))]);
      seen.push('k-');
    });
    await other;
    expect(seen).toEqual(['k+', 'z', 'k-']);
  });

  it.each([
    ['pending', 'in_progress'],
    ['in_progress', 'completed'],
    ['in_progress', 'failed'],
    ['in_progress', 'cancelled'],
    ['in_progress', 'expired'],
  ] as Array<[VideoStatus, VideoStatus]>)('applies the allowed transition %s → %s once, as a conditional update', async (from, to) => {
    const row = await jobIn(from);
    expect(await store.transitionVideoJob(row.id, [from, to], { generation_id: 'gen-x' })).toBe(true);
    const after = (await store.getVideoJob(row.id))!;
    expect(after.status).toBe(to);
    expect(after.generation_id).toBe('gen-x');
    // The same change again finds the job no longer in `from`: nothing happens.
    expect(await store.transitionVideoJob(row.id, [from, to], { error: 'second' })).toBe(false);
    expect((await store.getVideoJob(row.id))!.error).toBeNull();
  });

  it('refuses illegal transitions before touching the database', async () => {
    const pending = await jobIn('pending');
    await expect(store.transitionVideoJob(pending.id, ['pending', 'completed'], {})).rejects.toBeInstanceOf(IllegalTransitionError);
    await expect(store.transitionVideoJob(pending.id, ['pending', 'pending'], {})).rejects.toBeInstanceOf(IllegalTransitionError);
    expect((await store.getVideoJob(pending.id))!.status).toBe('pending');
    for (const terminal of ['completed', 'failed', 'cancelled', 'expired'] as const) {
      const done = await jobIn(terminal);
      for (const to of VIDEO_STATUSES) {
        await expect(store.transitionVideoJob(done.id, [terminal, to], {}), `${terminal} → ${to}`).rejects.toBeInstanceOf(IllegalTransitionError);
      }
      expect((await store.getVideoJob(done.id))!.status).toBe(terminal);
    }
  });

  it('makes a stale writer lose: a legal transition from a state the job already left does nothing', async () => {
    const row = await jobIn('completed');
    // A worker that still believes the job is in progress tries to fail it.
    expect(await store.transitionVideoJob(row.id, ['in_progress', 'failed'], { error: 'late' })).toBe(false);
    const after = (await store.getVideoJob(row.id))!;
    expect(after.status).toBe('completed');
    expect(after.error).toBeNull();
  });

  it('runs a multi-step path in one transaction, all or nothing', async () => {
    const pending = await jobIn('pending');
    expect(await store.transitionVideoJob(pending.id, ['pending', 'in_progress', 'cancelled'], { finished_at: iso(Date.now()) })).toBe(true);
    expect((await store.getVideoJob(pending.id))!.status).toBe('cancelled');
    // A job already in progress does not match the first step: the whole path is refused, nothing changes.
    const running = await jobIn('in_progress');
    expect(await store.transitionVideoJob(running.id, ['pending', 'in_progress', 'cancelled'], {})).toBe(false);
    expect((await store.getVideoJob(running.id))!.status).toBe('in_progress');
  });

  it('requires the lease owner when one is named', async () => {
    const row = await jobIn('in_progress', { lease_owner: 'worker-a', lease_until: iso(Date.now() + 60_000) });
    expect(await store.transitionVideoJob(row.id, ['in_progress', 'completed'], {}, { owner: 'worker-b' })).toBe(false);
    expect(await store.updateVideoJob(row.id, { poll_errors: 3 }, { status: 'in_progress', owner: 'worker-b' })).toBe(false);
    expect(await store.updateVideoJob(row.id, { poll_errors: 3 }, { status: 'in_progress', owner: 'worker-a' })).toBe(true);
    expect(await store.transitionVideoJob(row.id, ['in_progress', 'completed'], {}, { owner: 'worker-a' })).toBe(true);
    expect((await store.getVideoJob(row.id))!.poll_errors).toBe(3);
  });

  it('never changes status through updateVideoJob', async () => {
    const row = await jobIn('pending');
    await expect(store.updateVideoJob(row.id, { status: 'completed' } as never, {})).rejects.toThrow(/cannot change status/);
    expect(await store.updateVideoJob(row.id, { next_poll_at: iso(Date.now()) }, { status: 'in_progress' })).toBe(false);
    expect((await store.getVideoJob(row.id))!.status).toBe('pending');
  });

  it('keeps unknown statuses out of the table (check constraint)', async () => {
    await expect(store.insertVideoJob(job({ status: 'queued' as VideoStatus }))).rejects.toThrow();
  });

  describe('leases', () => {
    it('lets exactly one of several owners claim a job, and the holder keep it', async () => {
      const row = job({ created_at: iso(Date.now() - 3_600_000) });
      await store.insertVideoJob(row);
      const now = Date.now();
      const claims = await Promise.all(
        ['w1', 'w2', 'w3', 'w4'].map((owner) => store.claimVideoJobs({ owner, now: iso(now), leaseUntil: iso(now + 30_000), limit: 500 })),
      );
      const winners = claims.map((rows, i) => (rows.some((r) => r.id === row.id) ? `w${i + 1}` : null)).filter(Boolean);
      expect(winners).toHaveLength(1);
      const holder = winners[0]!;
      expect((await store.getVideoJob(row.id))!.lease_owner).toBe(holder);
      // The holder claims it again on its next pass; another owner still cannot.
      const again = await store.claimVideoJobs({ owner: holder, now: iso(now + 10), leaseUntil: iso(now + 30_000), limit: 500 });
      expect(again.some((r) => r.id === row.id)).toBe(true);
      const other = await store.claimVideoJobs({ owner: 'w9', now: iso(now + 10), leaseUntil: iso(now + 30_000), limit: 500 });
      expect(other.some((r) => r.id === row.id)).toBe(false);
    });

    it('hands over a job whose lease expired (a crashed instance)', async () => {
      const now = Date.now();
      const row = job({ status: 'pending', lease_owner: 'crashed', lease_until: iso(now - 1) });
      await store.insertVideoJob(row);
      const got = await store.claimVideoJobs({ owner: 'fresh', now: iso(now), leaseUntil: iso(now + 30_000), limit: 500 });
      expect(got.find((r) => r.id === row.id)?.lease_owner).toBe('fresh');
    });

    it('claims only jobs with work due: active and due for a poll, or a webhook due', async () => {
      const now = Date.now();
      const later = job({ next_poll_at: iso(now + 60_000) });
      const done = job();
      const hook = job({ callback_url: 'https://example.com/h' });
      for (const r of [later, done, hook]) await store.insertVideoJob(r);
      await store.transitionVideoJob(done.id, ['pending', 'in_progress', 'completed'], {});
      await store.transitionVideoJob(hook.id, ['pending', 'in_progress', 'failed'], { webhook_state: 'pending', webhook_next_at: iso(now - 5) });
      const got = (await store.claimVideoJobs({ owner: 'scan', now: iso(now), leaseUntil: iso(now + 30_000), limit: 1000 })).map((r) => r.id);
      expect(got).not.toContain(later.id);
      expect(got).not.toContain(done.id);
      expect(got).toContain(hook.id);
    });

    it('renews and releases the leases of one owner only', async () => {
      const now = Date.now();
      const mine = job({ lease_owner: 'me', lease_until: iso(now + 1000) });
      const theirs = job({ lease_owner: 'them', lease_until: iso(now + 1000) });
      await store.insertVideoJob(mine);
      await store.insertVideoJob(theirs);
      expect(await store.renewVideoLeases('me', iso(now + 99_000))).toBeGreaterThanOrEqual(1);
      expect((await store.getVideoJob(mine.id))!.lease_until).toBe(iso(now + 99_000));
      expect((await store.getVideoJob(theirs.id))!.lease_until).toBe(iso(now + 1000));
      expect(await store.releaseVideoLeases('me', [mine.id])).toBe(1);
      const released = (await store.getVideoJob(mine.id))!;
      expect(released.lease_owner).toBeNull();
      expect(released.lease_until).toBeNull();
      expect((await store.getVideoJob(theirs.id))!.lease_owner).toBe('them');
    });
  });
});
