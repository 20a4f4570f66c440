/** Credits, workspace budgets and the per-key lock (store/sql/spend.ts; docs/spend.md). */

import type { Page } from './common.js';

/** A workspace budget's interval (`lifetime`: never resets; the API shows it as `reset_interval: null`). */
export type BudgetInterval = 'daily' | 'weekly' | 'monthly' | 'lifetime';

/** A workspace budget (docs/spend.md): at most one per workspace and interval. */
export interface WorkspaceBudgetRow {
  id: string;
  workspace_id: string;
  interval: BudgetInterval;
  /** USD (stored as nano-dollars). */
  limit_usd: number;
  created_at: string;
  updated_at: string;
}

/** One change of the organization's credit balance (docs/spend.md, "Credits"): never updated, never deleted. */
export interface CreditEntryRow {
  id: string;
  /** USD (stored as nano-dollars); negative for a downward adjustment. */
  amount_usd: number;
  kind: 'top_up' | 'adjustment';
  note: string | null;
  /** Who made it (a management key's hash, or `cli`). */
  created_by: string | null;
  created_at: string;
}

/** The per-key lock, the credit ledger and workspace budgets. */
export interface SpendStore {
  /**
   * Runs `fn` while holding a lock on the key that every instance sharing the database respects (PostgreSQL: an
   * advisory lock on its own connection; a few holders at a time per instance, so that what runs under the locks
   * always finds a free connection); on SQLite, which one instance owns, `fn` simply runs. Callers serialize their
   * own concurrent calls per key in memory too.
   */
  withKeyLock<T>(hash: string, fn: () => Promise<T>): Promise<T>;
  insertCreditEntry(row: CreditEntryRow): Promise<void>;
  /** Newest first. */
  listCreditEntries(offset: number, limit: number): Promise<Page<CreditEntryRow>>;
  /** Sum of every ledger entry, USD (exact: summed in nano-dollars). */
  creditTotal(): Promise<number>;
  /** Everything the organization was billed (served generations, BYOK excluded), USD, exact. */
  organizationUsage(): Promise<number>;
  /** The workspace's budgets (daily, weekly, monthly, lifetime order) and its `include_byok_in_budgets`. */
  listWorkspaceBudgets(workspace_id: string): Promise<{ budgets: WorkspaceBudgetRow[]; include_byok_in_budgets: boolean }>;
  /**
   * Creates or replaces the budget of `row.interval` (keeping its id and created_at when it exists) and, when given,
   * sets the workspace-wide `include_byok_in_budgets`, in one transaction; `check` sees every budget the workspace
   * would then have and may throw to cancel. Returns the stored budget.
   */
  saveWorkspaceBudget(row: WorkspaceBudgetRow, includeByok: boolean | undefined, check: (all: WorkspaceBudgetRow[]) => void): Promise<WorkspaceBudgetRow>;
  deleteWorkspaceBudget(workspace_id: string, interval: BudgetInterval): Promise<boolean>;
}
