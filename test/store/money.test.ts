/**
 * Money stored exactly (migration 0008, docs/spend.md): USD amounts in integer nano-dollars on both databases, so
 * sums never show float noise; the nano-dollar columns are added beside the float ones (kept for the previous release
 * during a rolling update) and filled from them; the credit ledger and workspace budgets.
 */
import { randomUUID } from 'node:crypto';
import { Migrator, sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { BACKENDS, freshDatabase } from '../helpers.js';
import { openStore } from '../../src/store/sql-store.js';
import { migrations } from '../../src/store/migrations/index.js';
import type { GenerationRow, WorkspaceBudgetRow } from '../../src/store/types.js';

const windows = { day: '2026-11-22', week: '2026-11-16', month: '2026-11-01' };

function generation(over: Partial<GenerationRow> = {}): GenerationRow {
  return {
    id: randomUUID(), request_id: randomUUID(), key_hash: 'k'.repeat(64), workspace_id: 'ws', api_type: 'completions', requested_model: 'a/b',
    model: 'a/b', provider_name: 'sim', endpoint_tag: 'sim', upstream_id: null, streamed: false, cancelled: false, status: 200,
    finish_reason: 'stop', native_finish_reason: 'stop', tokens_prompt: 10, tokens_completion: 5, native_tokens_reasoning: 0, native_tokens_cached: 0,
    native_tokens_cache_write: 0, total_cost: 0.00016, upstream_inference_cost: 0.00016, is_byok: false, latency_ms: 3, ttft_ms: 2, generation_time_ms: 1,
    attempts: [], error: null, preset_id: null, session_id: null, created_at: '2026-11-22T10:00:00.000Z',
    ...over,
  };
}

describe.each(BACKENDS)('money in nano-dollars (%s)', (backend) => {
  it('sums three $0.00016 generations to exactly $0.00048 (a float sum gives 0.00047999999999999996)', async () => {
    expect(0.00016 + 0.00016 + 0.00016).not.toBe(0.00048);
    const db = await freshDatabase(backend);
    const store = openStore(db.url);
    try {
      await store.migrate();
      const rows = [generation(), generation(), generation()];
      for (const r of rows) await store.recordGenerations([r], [{ key_hash: r.key_hash, day: '2026-11-22', usage: 0.00016, byok_usage: 0, requests: 1 }]);
      const usage = (await store.getKeyUsage(['k'.repeat(64)], windows)).get('k'.repeat(64))!;
      expect(usage.usage).toBe(0.00048);
      expect(usage.usage_daily).toBe(0.00048);
      expect((await store.getGeneration(rows[0].id))!.total_cost).toBe(0.00016);
      const activity = await store.activity({ from: '2026-11-22T00:00:00.000Z', to: '2026-11-23T00:00:00.000Z', keyHashes: null, workspaceId: null, byWorkspace: false });
      expect(activity[0].usage).toBe(0.00048);
      expect(await store.organizationUsage()).toBe(0.00048);
    } finally {
      await store.close();
      await db.drop();
    }
  });

  it('migration 0008 adds exact nano-dollar columns beside the float ones (kept for the previous release), filled from them', async () => {
    const db = await freshDatabase(backend);
    const store = openStore(db.url);
    try {
      const kysely = (store as unknown as { db: Kysely<any> }).db;
      const migrator = new Migrator({ db: kysely, provider: { getMigrations: async () => migrations(store.kind) } });
      expect((await migrator.migrateTo('0007_workspace_members')).error).toBeUndefined();
      const bool = (v: boolean) => (backend === 'sqlite' ? (v ? 1 : 0) : v);
      const hash = 'm'.repeat(64);
      for (const day of ['2026-11-20', '2026-11-21', '2026-11-22']) {
        await kysely.insertInto('key_usage_daily').values({ key_hash: hash, day, usage: 0.00016, byok_usage: 0.1, requests: 1 }).execute();
      }
      const g = generation({ key_hash: hash, total_cost: 0.000123456789, upstream_inference_cost: null });
      await kysely
        .insertInto('generations')
        .values({ ...g, streamed: bool(false), cancelled: bool(false), is_byok: bool(false), attempts: JSON.stringify([]), error: null })
        .execute();
      const applied = await migrator.migrateTo('0008_spend_exact_money_credits_budgets');
      expect(applied.error).toBeUndefined();
      const usage = (await store.getKeyUsage([hash], windows)).get(hash)!;
      expect(usage.usage).toBe(0.00048);
      expect(usage.usage_daily).toBe(0.00016);
      expect(usage.byok_usage).toBe(0.3);
      const raw = await kysely.selectFrom('key_usage_daily').select(['usage', 'byok_usage', 'usage_nano', 'byok_usage_nano']).where('key_hash', '=', hash).orderBy('day').execute();
      // Expand only: the float columns keep their USD values; the nano-dollar columns hold them exactly.
      expect(raw.map((r) => [Number(r.usage), Number(r.byok_usage), Number(r.usage_nano), Number(r.byok_usage_nano)])).toEqual([
        [0.00016, 0.1, 160000, 100000000],
        [0.00016, 0.1, 160000, 100000000],
        [0.00016, 0.1, 160000, 100000000],
      ]);
      const back = (await store.getGeneration(g.id))!;
      expect(back.total_cost).toBe(0.000123457); // rounded to the nano-dollar
      expect(back.upstream_inference_cost).toBeNull();
      // The current store writes the later migrations' tables too (the analytics rollups of 0016): bring the schema up.
      expect((await migrator.migrateToLatest()).error).toBeUndefined();
      // New rows add to converted ones exactly.
      await store.recordGenerations([], [{ key_hash: hash, day: '2026-11-22', usage: 0.00016, byok_usage: 0, requests: 1 }]);
      expect((await store.getKeyUsage([hash], windows)).get(hash)!.usage).toBe(0.00064);
      // Both columns are written: the float one for the previous release, the nano-dollar one exactly.
      const day22 = await kysely.selectFrom('key_usage_daily').selectAll().where('key_hash', '=', hash).where('day', '=', '2026-11-22').executeTakeFirstOrThrow();
      expect([Number(day22.usage), Number(day22.usage_nano)]).toEqual([0.00032, 320000]);
      const g2 = generation({ key_hash: hash, total_cost: 0.00016, upstream_inference_cost: 0.00016 });
      await store.recordGenerations([g2], []);
      const g2raw = await kysely.selectFrom('generations').selectAll().where('id', '=', g2.id).executeTakeFirstOrThrow();
      expect([Number(g2raw.total_cost), Number(g2raw.total_cost_nano), Number(g2raw.upstream_inference_cost_nano)]).toEqual([0.00016, 160000, 160000]);

      // Rows the previous release writes during a rolling update (floats only) are read and summed through the fallback.
      const oldHash = 'o'.repeat(64);
      await kysely.insertInto('key_usage_daily').values({ key_hash: oldHash, day: '2026-11-22', usage: 0.00016, byok_usage: 0, requests: 1 }).execute();
      const old = generation({ key_hash: oldHash, total_cost: 0.00016, upstream_inference_cost: 0.00016 });
      await kysely
        .insertInto('generations')
        .values({ ...old, streamed: bool(false), cancelled: bool(false), is_byok: bool(false), attempts: JSON.stringify([]), error: null })
        .execute();
      expect((await store.getGeneration(old.id))!.total_cost).toBe(0.00016);
      expect((await store.getKeyUsage([oldHash], windows)).get(oldHash)!.usage).toBe(0.00016);
      await store.addKeyUsage([{ key_hash: oldHash, day: '2026-11-22', usage: 0.00032, byok_usage: 0, requests: 1 }]);
      expect((await store.getKeyUsage([oldHash], windows)).get(oldHash)!.usage).toBe(0.00048);
      // The previous release's upsert adds to the float columns only; a trigger carries the addition to the nano-dollars.
      await kysely
        .insertInto('key_usage_daily')
        .values({ key_hash: oldHash, day: '2026-11-22', usage: 0.00016, byok_usage: 0.1, requests: 1 })
        .onConflict((oc) =>
          oc.columns(['key_hash', 'day']).doUpdateSet({
            usage: sql`key_usage_daily.usage + excluded.usage`,
            byok_usage: sql`key_usage_daily.byok_usage + excluded.byok_usage`,
            requests: sql`key_usage_daily.requests + excluded.requests`,
          }),
        )
        .execute();
      const synced = (await store.getKeyUsage([oldHash], windows)).get(oldHash)!;
      expect([synced.usage, synced.byok_usage]).toEqual([0.00064, 0.1]);
      // g (0.000123457) + g2 + old, all non-BYOK.
      expect(await store.organizationUsage()).toBe(0.000443457);
    } finally {
      await store.close();
      await db.drop();
    }
  });

  it('keeps an auditable credit ledger and sums it exactly', async () => {
    const db = await freshDatabase(backend);
    const store = openStore(db.url);
    try {
      await store.migrate();
      const at = (s: number) => new Date(Date.UTC(2026, 10, 22, 10, 0, s)).toISOString();
      await store.insertCreditEntry({ id: randomUUID(), amount_usd: 0.1, kind: 'top_up', note: 'first', created_by: 'cli', created_at: at(1) });
      await store.insertCreditEntry({ id: randomUUID(), amount_usd: 0.2, kind: 'top_up', note: null, created_by: null, created_at: at(2) });
      await store.insertCreditEntry({ id: randomUUID(), amount_usd: -0.05, kind: 'adjustment', note: 'refund reversed', created_by: 'k', created_at: at(3) });
      expect(await store.creditTotal()).toBe(0.25);
      const page = await store.listCreditEntries(0, 2);
      expect(page.total).toBe(3);
      expect(page.rows.map((r) => r.amount_usd)).toEqual([-0.05, 0.2]);
      expect(page.rows[0]).toMatchObject({ kind: 'adjustment', note: 'refund reversed', created_by: 'k', created_at: at(3) });
    } finally {
      await store.close();
      await db.drop();
    }
  });

  it('stores workspace budgets, one per interval, with the workspace-wide BYOK switch', async () => {
    const db = await freshDatabase(backend);
    const store = openStore(db.url);
    try {
      await store.migrate();
      const ws = randomUUID();
      await store.insertWorkspace({
        id: ws, name: 'W', slug: `w-${ws.slice(0, 8)}`, description: null, default_text_model: null, default_image_model: null, default_provider_sort: null,
        io_logging_api_key_ids: null, io_logging_sampling_rate: 1, is_data_discount_logging_enabled: true, is_observability_broadcast_enabled: false,
        is_observability_io_logging_enabled: false, is_default: false, created_by: 'u', created_at: '2026-11-22T10:00:00.000Z', updated_at: null,
      });
      const budget = (interval: WorkspaceBudgetRow['interval'], limit_usd: number): WorkspaceBudgetRow => ({ id: randomUUID(), workspace_id: ws, interval, limit_usd, created_at: '2026-11-22T10:00:00.000Z', updated_at: '2026-11-22T10:00:00.000Z' });
      const seen: number[] = [];
      const first = await store.saveWorkspaceBudget(budget('monthly', 100.1), true, (all) => seen.push(all.length));
      await store.saveWorkspaceBudget(budget('daily', 5), undefined, (all) => seen.push(all.length));
      const again = await store.saveWorkspaceBudget({ ...budget('monthly', 90), updated_at: '2026-11-22T11:00:00.000Z' }, undefined, (all) => seen.push(all.length));
      expect(seen).toEqual([1, 2, 2]);
      expect(again.id).toBe(first.id);
      const listed = await store.listWorkspaceBudgets(ws);
      expect(listed.include_byok_in_budgets).toBe(true);
      expect(listed.budgets.map((b) => [b.interval, b.limit_usd])).toEqual([['daily', 5], ['monthly', 90]]);
      await expect(store.saveWorkspaceBudget(budget('weekly', 1), false, () => { throw new Error('refused'); })).rejects.toThrow('refused');
      expect((await store.listWorkspaceBudgets(ws)).include_byok_in_budgets).toBe(true); // the refused change changed nothing
      expect(await store.deleteWorkspaceBudget(ws, 'daily')).toBe(true);
      expect(await store.deleteWorkspaceBudget(ws, 'daily')).toBe(false);
      expect((await store.listWorkspaceBudgets(ws)).budgets).toHaveLength(1);
    } finally {
      await store.close();
      await db.drop();
    }
  });
});
