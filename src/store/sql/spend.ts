/** The per-key lock, the credit ledger and workspace budgets (docs/spend.md). */
import { sql, type Transaction } from 'kysely';
import { SqlBase, KEY_LOCK_SEED, type Db, type Row } from './base.js';
import type { BudgetInterval, CreditEntryRow, Page, SpendStore, WorkspaceBudgetRow } from '../types.js';
import { nanoToUsd, usdToNano } from '../../core/money.js';

export abstract class SpendSql extends SqlBase implements SpendStore {
  async withKeyLock<T>(hash: string, fn: () => Promise<T>): Promise<T> {
    if (this.kind === 'sqlite') return fn();
    // A session-level advisory lock on a connection of its own, so that `fn` may use the pool (and transactions)
    // freely; the lock id is a 64-bit hash of the key's hash in a namespace of its own.
    const id = sql`hashtextextended(${hash}, ${KEY_LOCK_SEED})`;
    return this.keyLockSlots.run(() =>
      this.db.connection().execute(async (conn) => {
        await sql`select pg_advisory_lock(${id})`.execute(conn);
        try {
          return await fn();
        } finally {
          await sql`select pg_advisory_unlock(${id})`.execute(conn);
        }
      }),
    );
  }

  // ---- credits and workspace budgets (docs/spend.md) -------------------------------------------------------------

  async insertCreditEntry(row: CreditEntryRow): Promise<void> {
    const { amount_usd, ...rest } = row;
    await this.guard(`credit entry ${row.id} already exists`, () => this.db.insertInto('credit_ledger').values({ ...rest, amount_nano: usdToNano(amount_usd) }).execute());
  }

  private creditRow(r: Row): CreditEntryRow {
    const { amount_nano, ...rest } = this.dec<Row>(r)!;
    return { ...(rest as Omit<CreditEntryRow, 'amount_usd'>), amount_usd: nanoToUsd(Number(amount_nano)) };
  }

  async listCreditEntries(offset: number, limit: number): Promise<Page<CreditEntryRow>> {
    const rows = await this.db.selectFrom('credit_ledger').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').offset(offset).limit(limit).execute();
    return { rows: rows.map((r) => this.creditRow(r)), total: await this.count('credit_ledger') };
  }

  async creditTotal(): Promise<number> {
    const row = await this.db.selectFrom('credit_ledger').select(sql<string>`cast(coalesce(sum(amount_nano), 0) as text)`.as('n')).executeTakeFirstOrThrow();
    return nanoToUsd(Number(row.n));
  }

  async organizationUsage(): Promise<number> {
    const row = await this.db
      .selectFrom('generations')
      .select(sql<string>`cast(coalesce(sum(${this.nanoOf('total_cost')}), 0) as text)`.as('n'))
      .where('is_byok', '=', this.bool(false))
      .where(this.nanoOf('total_cost'), '>', 0)
      .executeTakeFirstOrThrow();
    return nanoToUsd(Number(row.n));
  }

  private budgetRow(r: Row): WorkspaceBudgetRow {
    const d = this.dec<Row>(r)!;
    return {
      id: d.id as string,
      workspace_id: d.workspace_id as string,
      interval: d.budget_interval as BudgetInterval,
      limit_usd: nanoToUsd(Number(d.limit_nano)),
      created_at: d.created_at as string,
      updated_at: d.updated_at as string,
    };
  }

  private async budgetsIn(db: Db | Transaction<any>, workspace_id: string): Promise<WorkspaceBudgetRow[]> {
    const rows = await db.selectFrom('workspace_budgets').selectAll().where('workspace_id', '=', workspace_id).execute();
    const order: BudgetInterval[] = ['daily', 'weekly', 'monthly', 'lifetime'];
    return rows.map((r) => this.budgetRow(r)).sort((a, b) => order.indexOf(a.interval) - order.indexOf(b.interval));
  }

  async listWorkspaceBudgets(workspace_id: string): Promise<{ budgets: WorkspaceBudgetRow[]; include_byok_in_budgets: boolean }> {
    const [budgets, settings] = await Promise.all([
      this.budgetsIn(this.db, workspace_id),
      this.db.selectFrom('workspace_budget_settings').select('include_byok_in_budgets').where('workspace_id', '=', workspace_id).executeTakeFirst(),
    ]);
    return { budgets, include_byok_in_budgets: Boolean(settings?.include_byok_in_budgets ?? false) };
  }

  async saveWorkspaceBudget(row: WorkspaceBudgetRow, includeByok: boolean | undefined, check: (all: WorkspaceBudgetRow[]) => void): Promise<WorkspaceBudgetRow> {
    return this.db.transaction().execute(async (trx) => {
      // Serializes the workspace's budget changes (PostgreSQL; a SQLite transaction holds the write lock already).
      if (this.kind === 'postgres') await sql`select id from workspaces where id = ${row.workspace_id} for update`.execute(trx);
      const current = await this.budgetsIn(trx, row.workspace_id);
      const existing = current.find((b) => b.interval === row.interval);
      const saved: WorkspaceBudgetRow = existing ? { ...row, id: existing.id, created_at: existing.created_at } : row;
      check([...current.filter((b) => b.interval !== row.interval), saved]);
      const values = { limit_nano: usdToNano(saved.limit_usd), updated_at: saved.updated_at };
      if (existing) await trx.updateTable('workspace_budgets').set(values).where('id', '=', existing.id).execute();
      else {
        await trx
          .insertInto('workspace_budgets')
          .values({ id: saved.id, workspace_id: saved.workspace_id, budget_interval: saved.interval, created_at: saved.created_at, ...values })
          .execute();
      }
      if (includeByok !== undefined) {
        await trx
          .insertInto('workspace_budget_settings')
          .values({ workspace_id: row.workspace_id, include_byok_in_budgets: this.bool(includeByok), updated_at: saved.updated_at })
          .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ include_byok_in_budgets: this.bool(includeByok), updated_at: saved.updated_at }))
          .execute();
      }
      return saved;
    });
  }

  async deleteWorkspaceBudget(workspace_id: string, interval: BudgetInterval): Promise<boolean> {
    const res = await this.db.deleteFrom('workspace_budgets').where('workspace_id', '=', workspace_id).where('budget_interval', '=', interval).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}
