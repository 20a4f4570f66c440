/**
 * Generation batches on a SQLite file go through the writer thread: committed before `recordGenerations` resolves and
 * readable at once on the request thread's connection; nothing is lost when the thread dies (in-thread fallback) and
 * an in-memory database writes in-thread.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type SqlStore } from '../../src/store/sql-store.js';
import type { GenerationRow } from '../../src/store/types.js';

let n = 0;
function row(over: Partial<GenerationRow> = {}): GenerationRow {
  n++;
  return {
    id: `gen-test-${n}`, request_id: `req-${n}`, key_hash: 'h'.repeat(64), workspace_id: 'ws', api_type: 'completions', requested_model: 'a/b',
    model: 'a/b', provider_name: 'sim', endpoint_tag: 'sim', upstream_id: null, streamed: n % 2 === 0, cancelled: false, status: 200,
    finish_reason: 'stop', native_finish_reason: 'stop', tokens_prompt: 10, tokens_completion: 5, native_tokens_reasoning: 0, native_tokens_cached: 0,
    native_tokens_cache_write: 0, total_cost: 0.0001, upstream_inference_cost: 0.0001, is_byok: false, latency_ms: 3, ttft_ms: 2, generation_time_ms: 1,
    attempts: [{ provider: 'sim', model: 'a/b', status: 200 }], error: null, preset_id: null, session_id: null, created_at: '2026-11-22T10:00:00.000Z',
    ...over,
  };
}

const dirs: string[] = [];
const stores: SqlStore[] = [];
async function fileStore(): Promise<SqlStore> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-writer-'));
  dirs.push(dir);
  const store = openStore(`sqlite:${join(dir, 'g.db')}`);
  stores.push(store);
  await store.migrate();
  return store;
}

afterEach(async () => {
  for (const s of stores.splice(0)) await s.close().catch(() => undefined);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const usage = (r: GenerationRow) => ({ key_hash: r.key_hash, day: '2026-11-22', usage: r.total_cost!, byok_usage: 0, requests: 1 });
const windows = { day: '2026-11-22', week: '2026-11-16', month: '2026-11-01' };

describe('SQLite generation writer thread', () => {
  it('a batch is committed by the thread before recordGenerations resolves, with every type kept', async () => {
    const store = await fileStore();
    const rows = Array.from({ length: 300 }, () => row());
    await store.recordGenerations(rows, rows.map(usage));
    const back = await store.getGeneration(rows[1].id);
    expect(back).toMatchObject({ id: rows[1].id, streamed: true, cancelled: false, attempts: rows[1].attempts, error: null, total_cost: 0.0001 });
    const totals = await store.getKeyUsage(['h'.repeat(64)], windows);
    expect(totals.get('h'.repeat(64))?.usage_daily).toBeCloseTo(0.03, 10);
    // A repeated id is ignored (a retried batch after an ambiguous failure writes nothing twice).
    await store.recordGenerations([rows[0]], []);
    expect((await store.getGeneration(rows[0].id))?.id).toBe(rows[0].id);
  });

  it('when the thread dies, the batch is written in-thread and later batches too', async () => {
    const store = await fileStore();
    await store.recordGenerations([row()], []);
    const thread = await (store as unknown as { writerStart: Promise<{ worker: { terminate(): Promise<number> } }> }).writerStart;
    await thread.worker.terminate();
    const a = row();
    const b = row();
    await store.recordGenerations([a], [usage(a)]);
    await store.recordGenerations([b], [usage(b)]);
    expect(await store.getGeneration(a.id)).not.toBeNull();
    expect(await store.getGeneration(b.id)).not.toBeNull();
  });

  it('close() lets batches already posted finish', async () => {
    const store = await fileStore();
    const rows = Array.from({ length: 50 }, () => row());
    const writing = store.recordGenerations(rows, []);
    await writing;
    await store.close();
    stores.splice(stores.indexOf(store), 1);
    const again = openStore(`sqlite:${join(dirs[dirs.length - 1], 'g.db')}`);
    stores.push(again);
    expect(await again.getGeneration(rows[49].id)).not.toBeNull();
  });

  it('an in-memory database writes in-thread', async () => {
    const store = openStore('sqlite::memory:');
    stores.push(store);
    await store.migrate();
    const r = row();
    await store.recordGenerations([r], [usage(r)]);
    expect(await store.getGeneration(r.id)).not.toBeNull();
    expect((store as unknown as { writerStart: unknown }).writerStart).toBeNull();
  });
});

describe('key usage of a batch', () => {
  it('is one delta per key and UTC day, costed generations only, BYOK apart', async () => {
    const { keyUsage } = await import('../../src/services/generations.js');
    const a = 'a'.repeat(64);
    const b = 'b'.repeat(64);
    const rows = [
      row({ key_hash: a, total_cost: 0.25, created_at: '2026-11-22T10:00:00.000Z' }),
      row({ key_hash: a, total_cost: 0.5, created_at: '2026-11-22T23:59:59.999Z' }),
      row({ key_hash: a, total_cost: 1, created_at: '2026-11-23T00:00:00.000Z' }),
      row({ key_hash: a, total_cost: 0.125, is_byok: true, created_at: '2026-11-22T11:00:00.000Z' }),
      row({ key_hash: b, total_cost: null, created_at: '2026-11-22T10:00:00.000Z' }),
      row({ key_hash: b, total_cost: 0, created_at: '2026-11-22T10:00:00.000Z' }),
      row({ key_hash: b, total_cost: 2, created_at: '2026-11-22T10:00:00.000Z' }),
    ];
    expect(keyUsage(rows)).toEqual([
      { key_hash: a, day: '2026-11-22', usage: 0.75, byok_usage: 0.125, requests: 3 },
      { key_hash: a, day: '2026-11-23', usage: 1, byok_usage: 0, requests: 1 },
      { key_hash: b, day: '2026-11-22', usage: 2, byok_usage: 0, requests: 1 },
    ]);
  });

  it('takes the UTC day of a timestamp written with an offset', async () => {
    const { keyUsage } = await import('../../src/services/generations.js');
    const a = 'a'.repeat(64);
    // 01:30 at +02:00 is 23:30 UTC the day before.
    expect(keyUsage([row({ key_hash: a, total_cost: 1, created_at: '2026-11-23T01:30:00.000+02:00' })])).toEqual([
      { key_hash: a, day: '2026-11-22', usage: 1, byok_usage: 0, requests: 1 },
    ]);
  });

  it('groups runs of one key and day like any other order (an offset row between UTC ones, days alternating)', async () => {
    const { keyUsage } = await import('../../src/services/generations.js');
    const a = 'a'.repeat(64);
    const rows = [
      row({ key_hash: a, total_cost: 1, created_at: '2026-11-22T23:00:00.000Z' }),
      // 2026-11-23T00:30 at +02:00 is 2026-11-22 UTC; then a UTC row of the 22nd after it, and one of the 23rd.
      row({ key_hash: a, total_cost: 2, created_at: '2026-11-23T00:30:00.000+02:00' }),
      row({ key_hash: a, total_cost: 4, created_at: '2026-11-22T23:59:00.000Z' }),
      row({ key_hash: a, total_cost: 8, created_at: '2026-11-23T00:00:01.000Z' }),
      row({ key_hash: a, total_cost: 16, created_at: '2026-11-22T01:00:00.000Z' }),
    ];
    expect(keyUsage(rows)).toEqual([
      { key_hash: a, day: '2026-11-22', usage: 23, byok_usage: 0, requests: 4 },
      { key_hash: a, day: '2026-11-23', usage: 8, byok_usage: 0, requests: 1 },
    ]);
  });
});
