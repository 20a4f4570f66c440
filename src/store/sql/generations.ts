/** Generation records (the busiest write path), their dead letters, key usage, the request log, analytics and activity. */
import { randomUUID } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import { WriterGone, type NanoUsageDelta } from '../sqlite-writer.js';
import { selectGenerationPage, type GenerationLogQuery } from '../generation-log.js';
import { runAnalytics, type AnalyticsQuery } from '../analytics.js';
import { addRollups, rollupActivity, sqliteRollupValues } from '../rollups.js';
import { SqlBase, encodeGeneration, escapeText, nanoUsage, storedNano } from './base.js';
import type { ActivityRow, DeadLetter, DeadLetterRow, GenerationRow, GenerationStore, KeyTokensDelta, KeyUsageDelta, KeyUsageTotals } from '../types.js';
import { nanoToUsd } from '../../core/money.js';

/** Rows per key_tokens_minute upsert (3 parameters each) and keys per seed read: well under both databases' parameter limits. */
const TOKEN_ROWS = 5_000;
const TOKEN_HASHES = 10_000;

export abstract class GenerationSql extends SqlBase implements GenerationStore {
  async recordGenerations(rows: GenerationRow[], usage: KeyUsageDelta[]): Promise<void> {
    if (rows.length === 0 && usage.length === 0) return;
    const thread = this.writerThread();
    const values = this.embedded ? rows.map(encodeGeneration) : null;
    const merged = nanoUsage(usage);
    // SQLite: the analytics rollups in the same transaction, by a prepared upsert (store/rollups.ts).
    const rollups = values ? sqliteRollupValues(rows) : [];
    if (thread && values) {
      try {
        await (await thread).write(values, merged, rollups);
        return;
      } catch (err) {
        if (!(err instanceof WriterGone)) throw err;
        this.embeddedPath = undefined; // the thread is gone: write in-thread from now on
      }
    }
    const writer = this.sqliteWriter;
    if (writer && values) {
      // Holding Kysely's connection guarantees no Kysely transaction is open while the prepared batch runs.
      await this.db.connection().execute(async () => writer(values, merged, rollups));
      return;
    }
    await this.db.transaction().execute(async (trx) => {
      // Batches of 50 rows keep each statement well under the databases' parameter limits.
      const inserted = new Set<string>();
      for (let i = 0; i < rows.length; i += 50) {
        const ids = await trx
          .insertInto('generations')
          .values(rows.slice(i, i + 50).map((r) => this.enc({ ...r })))
          .onConflict((oc) => oc.column('id').doNothing())
          .returning('id')
          .execute();
        for (const r of ids) inserted.add(r.id as string);
      }
      await this.addNanoUsageIn(trx, merged);
      // The analytics rollups, in the same transaction as the records (of the rows actually inserted: a batch sent
      // again after an unclear commit adds nothing twice).
      await addRollups(trx, this.kind, inserted.size === rows.length ? rows : rows.filter((r) => inserted.has(r.id)));
    });
  }

  async deadLetterGenerations(entries: DeadLetter[], usage: KeyUsageDelta[]): Promise<void> {
    if (entries.length === 0 && usage.length === 0) return;
    const now = new Date().toISOString();
    await this.db.transaction().execute(async (trx) => {
      for (const { row, reason } of entries) {
        await trx
          .insertInto('generation_dead_letters')
          // JSON.stringify escapes NUL and lone surrogates: the text is storable even when the row was not.
          .values({ id: randomUUID(), generation_id: escapeText(row.id), key_hash: escapeText(row.key_hash), reason: escapeText(reason.slice(0, 1000)), record: JSON.stringify(row), created_at: now })
          .execute();
      }
      await this.addNanoUsageIn(trx, nanoUsage(usage));
    });
  }

  async listGenerationDeadLetters(limit: number): Promise<DeadLetterRow[]> {
    const rows = await this.db.selectFrom('generation_dead_letters').selectAll().orderBy('created_at', 'desc').limit(limit).execute();
    return this.decAll<DeadLetterRow>(rows);
  }

  async getGeneration(id: string): Promise<GenerationRow | null> {
    return this.dec<GenerationRow>(await this.db.selectFrom('generations').selectAll().where('id', '=', id).executeTakeFirst());
  }

  /** The request log (store/generation-log.ts). */
  async listGenerations(q: GenerationLogQuery): Promise<GenerationRow[]> {
    return this.decAll<GenerationRow>(await selectGenerationPage(this.db, q));
  }

  async analytics(q: AnalyticsQuery): Promise<Record<string, string | number | null>[]> {
    return runAnalytics(this.db, this.kind, q);
  }

  async addKeyUsage(deltas: KeyUsageDelta[]): Promise<void> {
    if (deltas.length === 0) return;
    await this.db.transaction().execute((trx) => this.addNanoUsageIn(trx, nanoUsage(deltas)));
  }

  /** Adds deltas already in nano-dollars and merged per key and day (`nanoUsage`). */
  private async addNanoUsageIn(trx: Transaction<any>, merged: NanoUsageDelta[]): Promise<void> {
    for (const d of merged) {
      await trx
        .insertInto('key_usage_daily')
        .values({ ...d })
        .onConflict((oc) =>
          oc.columns(['key_hash', 'day']).doUpdateSet({
            // Both columns (expand/contract); a row only the previous release wrote has its nano-dollars from the float.
            usage: sql`key_usage_daily.usage + ${d.usage}`,
            usage_nano: sql`${this.nanoOf('key_usage_daily.usage')} + ${d.usage_nano}`,
            byok_usage: sql`key_usage_daily.byok_usage + ${d.byok_usage}`,
            byok_usage_nano: sql`${this.nanoOf('key_usage_daily.byok_usage')} + ${d.byok_usage_nano}`,
            requests: sql`key_usage_daily.requests + ${d.requests}`,
          }),
        )
        .execute();
    }
  }

  async addKeyTokens(deltas: KeyTokensDelta[], keepFrom: number): Promise<void> {
    // Merged per minute and key, in one order (two instances upserting the same rows never wait on each other in a cycle).
    const merged = new Map<string, KeyTokensDelta>();
    for (const d of deltas) {
      if (!(d.tokens > 0)) continue;
      const k = `${d.minute}|${d.key_hash}`;
      const m = merged.get(k);
      if (m) m.tokens += d.tokens;
      else merged.set(k, { ...d });
    }
    const rows = [...merged.values()].sort((a, b) => a.minute - b.minute || (a.key_hash < b.key_hash ? -1 : a.key_hash > b.key_hash ? 1 : 0));
    await this.db.transaction().execute(async (trx) => {
      // Multi-row upserts: 3 parameters a row, TOKEN_ROWS rows a statement (under SQLite's 32,766 and PostgreSQL's 65,535).
      for (let i = 0; i < rows.length; i += TOKEN_ROWS) {
        await trx
          .insertInto('key_tokens_minute')
          .values(rows.slice(i, i + TOKEN_ROWS).map((d) => ({ minute: d.minute, key_hash: d.key_hash, tokens: Math.round(d.tokens) })))
          .onConflict((oc) => oc.columns(['minute', 'key_hash']).doUpdateSet({ tokens: sql`key_tokens_minute.tokens + excluded.tokens` }))
          .execute();
      }
      await trx.deleteFrom('key_tokens_minute').where('minute', '<', keepFrom).execute();
    });
  }

  async keyTokensInMinute(hashes: string[], minute: number): Promise<number> {
    let n = 0;
    // The key list in chunks (a workspace may hold more keys than a statement takes parameters).
    for (let i = 0; i < hashes.length; i += TOKEN_HASHES) {
      const row = await this.db
        .selectFrom('key_tokens_minute')
        .select(sql<string>`cast(coalesce(sum(tokens), 0) as text)`.as('n'))
        .where('minute', '=', minute)
        .where('key_hash', 'in', hashes.slice(i, i + TOKEN_HASHES))
        .executeTakeFirstOrThrow();
      n += Number(row.n);
    }
    return n;
  }

  async getKeyUsage(hashes: string[], w: { day: string; week: string; month: string }): Promise<Map<string, KeyUsageTotals>> {
    const out = new Map<string, KeyUsageTotals>();
    for (const h of hashes) {
      out.set(h, { usage: 0, usage_daily: 0, usage_weekly: 0, usage_monthly: 0, byok_usage: 0, byok_usage_daily: 0, byok_usage_weekly: 0, byok_usage_monthly: 0 });
    }
    if (hashes.length === 0) return out;
    const rows = await this.db.selectFrom('key_usage_daily').selectAll().where('key_hash', 'in', hashes).execute();
    // Summed in nano-dollars (exact), turned into USD once.
    for (const r of rows) {
      const t = out.get(r.key_hash as string)!;
      const day = r.day as string;
      const u = storedNano(r.usage_nano, r.usage) ?? 0;
      const b = storedNano(r.byok_usage_nano, r.byok_usage) ?? 0;
      t.usage += u;
      t.byok_usage += b;
      if (day >= w.day) (t.usage_daily += u), (t.byok_usage_daily += b);
      if (day >= w.week) (t.usage_weekly += u), (t.byok_usage_weekly += b);
      if (day >= w.month) (t.usage_monthly += u), (t.byok_usage_monthly += b);
    }
    for (const t of out.values()) for (const k of Object.keys(t) as Array<keyof KeyUsageTotals>) t[k] = nanoToUsd(t[k]);
    return out;
  }

  /** GET /activity, from the day rollups (store/rollups.ts). */
  async activity(q: { from: string; to: string; keyHashes: string[] | null; workspaceId: string | null; byWorkspace: boolean }): Promise<ActivityRow[]> {
    return rollupActivity(this.db, this.kind, q);
  }
}
