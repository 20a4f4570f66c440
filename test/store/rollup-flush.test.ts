/**
 * The analytics rollups of one flush (store/rollups.ts, core/rollups.ts): a batch of many records for the same key and
 * hour is summed in memory and written as one upsert per rollup row — one row per grain and bucket, not one per
 * record — with exact totals, on both databases; a second flush adds to the same rows.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { BACKENDS, freshDatabase } from '../helpers.js';
import { openStore } from '../../src/store/sql-store.js';
import { sqliteRollupValues } from '../../src/store/rollups.js';
import type { GenerationRow } from '../../src/store/types.js';

const KEY = 'k'.repeat(64);

function generation(i: number): GenerationRow {
  // 240 records over minutes 10:00–10:03 of one hour: 60 a minute; costs of $0.0001 × (1, 2, 3) and latencies 1–240 ms.
  const minute = Math.floor(i / 60);
  const second = String(i % 60).padStart(2, '0');
  return {
    id: randomUUID(), request_id: randomUUID(), key_hash: KEY, workspace_id: 'ws', api_type: 'completions', requested_model: 'a/b',
    model: 'a/b', provider_name: 'sim', endpoint_tag: 'sim', upstream_id: null, streamed: false, cancelled: false, status: 200,
    finish_reason: 'stop', native_finish_reason: 'stop', tokens_prompt: 10 + (i % 3), tokens_completion: 5, native_tokens_reasoning: 1, native_tokens_cached: 0,
    native_tokens_cache_write: 0, total_cost: 0.0001 * (1 + (i % 3)), upstream_inference_cost: 0.0001 * (1 + (i % 3)), is_byok: false, latency_ms: i + 1, ttft_ms: 1,
    generation_time_ms: 1, attempts: [], error: null, preset_id: null, session_id: null, created_at: `2026-11-22T10:0${minute}:${second}.000Z`,
  };
}

describe('rollups of one flush', () => {
  it('sums a batch per grain and bucket before writing: 240 records of one key and hour make six upserts', () => {
    const rows = Array.from({ length: 240 }, (_, i) => generation(i));
    const values = sqliteRollupValues(rows);
    // Four minutes, one hour, one day.
    expect(values.map((v) => [v[0], v[1], v[12]])).toEqual([
      ['day', '2026-11-22T00:00:00.000Z', 240],
      ['hour', '2026-11-22T10:00:00.000Z', 240],
      ['minute', '2026-11-22T10:00:00.000Z', 60],
      ['minute', '2026-11-22T10:01:00.000Z', 60],
      ['minute', '2026-11-22T10:02:00.000Z', 60],
      ['minute', '2026-11-22T10:03:00.000Z', 60],
    ]);
  });
});

describe.each(BACKENDS)('rollups of one flush (%s)', (backend) => {
  it('writes the right totals for many records of the same key and hour, and a second flush adds to them', async () => {
    const db = await freshDatabase(backend);
    const store = openStore(db.url);
    try {
      await store.migrate();
      const rows = Array.from({ length: 240 }, (_, i) => generation(i));
      await store.recordGenerations(rows, [{ key_hash: KEY, day: '2026-11-22', usage: 0.048, byok_usage: 0, requests: 240 }]);
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const kysely = (store as unknown as { db: Kysely<any> }).db;
      const stored = await kysely.selectFrom('generation_rollups').select(['grain', 'bucket', 'requests', 'cost_nano', 'tokens_prompt', 'latency_ms_sum']).orderBy('grain').orderBy('bucket').execute();
      expect(stored.map((r) => [r.grain, Number(r.requests)])).toEqual([['day', 240], ['hour', 240], ['minute', 60], ['minute', 60], ['minute', 60], ['minute', 60]]);
      // 80 records each of $0.0001, $0.0002 and $0.0003: $0.048 exactly; prompt tokens 80 × (10 + 11 + 12); latency 1 + … + 240.
      const hour = stored.find((r) => r.grain === 'hour')!;
      expect(Number(hour.cost_nano)).toBe(48_000_000);
      expect(Number(hour.tokens_prompt)).toBe(80 * 33);
      expect(Number(hour.latency_ms_sum)).toBe((240 * 241) / 2);
      const q = { metrics: ['request_count', 'total_cost', 'prompt_tokens', 'avg_latency_ms'] as const, dimensions: [], filters: [], orderBy: { field: 'date', direction: 'asc' as const }, limit: 100 };
      const byHour = await store.analytics({ ...q, metrics: [...q.metrics], granularity: 'hour', start: '2026-11-22T10:00:00.000Z', end: '2026-11-22T11:00:00.000Z' });
      expect(byHour).toEqual([{ date__hour: '2026-11-22T10:00:00.000Z', request_count: 240, total_cost: 0.048, prompt_tokens: 2640, avg_latency_ms: 120.5 }]);

      // A second flush of the same key and hour adds to the same rows (no new row).
      const more = Array.from({ length: 60 }, (_, i) => generation(i));
      await store.recordGenerations(more, [{ key_hash: KEY, day: '2026-11-22', usage: 0.012, byok_usage: 0, requests: 60 }]);
      const again = await store.analytics({ ...q, metrics: [...q.metrics], granularity: 'hour', start: '2026-11-22T10:00:00.000Z', end: '2026-11-22T11:00:00.000Z' });
      expect(again[0]).toMatchObject({ request_count: 300, total_cost: 0.06, prompt_tokens: 2640 + 20 * 33 });
      const count = await kysely.selectFrom('generation_rollups').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
      expect(Number(count.n)).toBe(6);
    } finally {
      await store.close();
      await db.drop();
    }
  });
});
