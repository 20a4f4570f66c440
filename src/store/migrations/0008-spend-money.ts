/** Migrations 0008: Exact money (nano-dollar columns), the credit ledger and workspace budgets (docs/spend.md). Never edit an applied migration: add a new one. */
import { sql, type Migration } from 'kysely';
import type { ColumnTypes, Db, Dialect } from './types.js';

/**
 * Money columns given an exact twin by `spendMoney`: (table, USD float column, its nano-dollar column). Expand, then
 * contract (docs/operations.md): the float columns stay exactly as they were, for the previous release during a
 * rolling update; the current code writes both and reads the nano-dollar column, falling back to the float (converted)
 * where it is null (rows written by the previous release). A later contract migration drops the float columns.
 */
export const MONEY_COLUMNS: Array<[table: string, column: string, nano: string]> = [
  ['key_usage_daily', 'usage', 'usage_nano'],
  ['key_usage_daily', 'byok_usage', 'byok_usage_nano'],
  ['generations', 'total_cost', 'total_cost_nano'],
  ['generations', 'upstream_inference_cost', 'upstream_inference_cost_nano'],
  ['video_jobs', 'cost', 'cost_nano'],
  ['video_jobs', 'reserved_cost', 'reserved_cost_nano'],
];

/**
 * The previous release adds to `key_usage_daily.usage`/`byok_usage` in place (an upsert), not knowing the nano-dollar
 * columns: on a row the current code already wrote, its additions would be missing from them. A trigger adds what an
 * update adds to a float column to its nano-dollar twin when the update leaves the twin alone. The contract migration
 * that drops the float columns drops these triggers first.
 */
async function keyUsageNanoSync(dialect: Dialect, db: Db): Promise<void> {
  const pairs = MONEY_COLUMNS.filter(([table]) => table === 'key_usage_daily');
  if (dialect === 'postgres') {
    const steps = pairs.map(
      ([, c, n]) =>
        `if new.${c} is distinct from old.${c} and new.${n} is not distinct from old.${n} then ` +
        `new.${n} := coalesce(old.${n}, round(old.${c} * 1000000000)::bigint) + round((new.${c} - old.${c}) * 1000000000)::bigint; end if;`,
    );
    await sql
      .raw(`create function key_usage_daily_nano_sync() returns trigger language plpgsql as $$ begin ${steps.join(' ')} return new; end $$`)
      .execute(db);
    await sql`create trigger key_usage_daily_nano_sync before update on key_usage_daily for each row execute function key_usage_daily_nano_sync()`.execute(db);
    return;
  }
  for (const [, c, n] of pairs) {
    await sql
      .raw(
        `create trigger key_usage_daily_${n}_sync after update of ${c} on key_usage_daily for each row ` +
          `when new.${c} is not old.${c} and new.${n} is old.${n} begin ` +
          `update key_usage_daily set ${n} = coalesce(old.${n}, cast(round(old.${c} * 1000000000) as integer)) + cast(round((new.${c} - old.${c}) * 1000000000) as integer) ` +
          `where key_hash = new.key_hash and day = new.day; end`,
      )
      .execute(db);
  }
}

/**
 * Spend (docs/spend.md): money stored exactly, as integer nano-dollars (10⁻⁹ USD) in 64-bit integer columns, so that
 * sums never drift (`0.00047999999999999996`). Each USD float column gets a nullable nano-dollar column beside it,
 * filled from the existing floats (rounded to the nano-dollar); the float columns are left untouched (expand only).
 * Plus the organization's credit ledger (every top-up and adjustment, one row each) and workspace budgets (one row per
 * workspace and interval; `reset_interval` null = lifetime) with the workspace-wide `include_byok_in_budgets`.
 */
export function spendMoney(dialect: Dialect, t: ColumnTypes): Migration {
  return {
    async up(db: Db) {
      const int = dialect === 'postgres' ? sql`bigint` : sql`integer`;
      for (const [table, column, nano] of MONEY_COLUMNS) {
        await db.schema.alterTable(table).addColumn(nano, dialect === 'postgres' ? 'bigint' : 'integer').execute();
        await sql`update ${sql.table(table)} set ${sql.ref(nano)} = cast(round(${sql.ref(column)} * 1000000000) as ${int}) where ${sql.ref(column)} is not null`.execute(db);
      }
      await keyUsageNanoSync(dialect, db);

      await db.schema
        .createTable('credit_ledger')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('amount_nano', 'bigint', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('top_up', 'adjustment')`))
        .addColumn('note', 'text')
        .addColumn('created_by', 'text')
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('credit_ledger_created_idx').on('credit_ledger').columns(['created_at', 'id']).execute();

      await db.schema
        .createTable('workspace_budgets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        // 'daily' | 'weekly' | 'monthly' | 'lifetime' (the API shows lifetime as reset_interval null).
        .addColumn('budget_interval', 'text', (c) => c.notNull().check(sql`budget_interval in ('daily', 'weekly', 'monthly', 'lifetime')`))
        .addColumn('limit_nano', 'bigint', (c) => c.notNull())
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .addColumn('updated_at', t.ts, (c) => c.notNull())
        .addUniqueConstraint('workspace_budgets_uq', ['workspace_id', 'budget_interval'])
        .execute();
      await db.schema
        .createTable('workspace_budget_settings')
        .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id').onDelete('cascade'))
        .addColumn('include_byok_in_budgets', t.bool, (c) => c.notNull())
        .addColumn('updated_at', t.ts, (c) => c.notNull())
        .execute();
    },
  };
}
