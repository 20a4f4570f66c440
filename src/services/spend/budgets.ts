/**
 * Workspace budgets (docs/spend.md, "Workspace budgets"): at most one per workspace and interval (daily, weekly,
 * monthly, lifetime), limits strictly decreasing as the interval narrows (lifetime > monthly > weekly > daily), and a
 * workspace-wide `include_byok_in_budgets`. Each budget is a scope of spend control: every request of a key of the
 * workspace reserves against it.
 */
import { randomUUID } from 'node:crypto';
import { badRequest, notFound } from '../../core/errors.js';
import { windowStarts } from '../../core/limits.js';
import { nanoToUsd, usdToNano } from '../../core/money.js';
import { scopeId, type SpendWindow } from '../../core/spend.js';
import type { BudgetInterval, Store, WorkspaceBudgetRow } from '../../store/types.js';
import { byokSpendId, type GenerationRecorder } from '../generations.js';
import type { InvalidationBus } from '../invalidation.js';
import type { WorkspaceService } from '../workspaces.js';
import { FreshCache } from '../fresh-cache.js';
import type { ScopeSpec } from './types.js';

export const BUDGET_INTERVALS: readonly BudgetInterval[] = ['daily', 'weekly', 'monthly', 'lifetime'];
/** Cached budgets of a workspace are read again after this long (and at once after a change on any instance). */
const BUDGET_TTL_MS = 30_000;

/** Broken ordering rules, in words, for the 400 (null when the budgets are in order). */
export function budgetOrderProblem(all: Array<Pick<WorkspaceBudgetRow, 'interval' | 'limit_usd'>>): string | null {
  const byInterval = new Map(all.map((b) => [b.interval, b.limit_usd]));
  const present = BUDGET_INTERVALS.filter((i) => byInterval.has(i));
  for (let i = 1; i < present.length; i++) {
    const narrow = present[i - 1];
    const wide = present[i];
    if (!(byInterval.get(wide)! > byInterval.get(narrow)!)) {
      return `limit_usd: budget limits must strictly decrease as the interval narrows (lifetime > monthly > weekly > daily): the ${wide} budget ($${byInterval.get(wide)}) must be greater than the ${narrow} budget ($${byInterval.get(narrow)}) (budget_order)`;
    }
  }
  return null;
}

export class WorkspaceBudgetService {
  private readonly cache: FreshCache<{ budgets: WorkspaceBudgetRow[]; includeByok: boolean }>;

  constructor(
    private readonly deps: { store: Store; workspaces: WorkspaceService; recorder: GenerationRecorder; bus?: InvalidationBus; now?: () => number },
  ) {
    this.cache = new FreshCache({ ttlMs: BUDGET_TTL_MS, now: () => this.now(), bus: deps.bus, kinds: ['workspace_budget', 'workspace'] });
  }

  private now(): number {
    return this.deps.now ? this.deps.now() : Date.now();
  }

  /** What the workspace's keys spent in the interval's current window (USD, exact), BYOK included when set. */
  async spent(workspaceId: string, interval: BudgetInterval, includeByok: boolean): Promise<number> {
    return nanoToUsd(await this.spentNano(workspaceId, interval, includeByok));
  }

  private async spentNano(workspaceId: string, interval: BudgetInterval, includeByok: boolean): Promise<number> {
    // Taken before the store is read (it seeds spend control): a batch written during the read is never missed.
    const pending = new Map(this.deps.recorder.unflushedSpend);
    const hashes = await this.deps.store.listKeyHashes({ workspace_id: workspaceId });
    const usage = await this.deps.store.getKeyUsage(hashes, windowStarts(this.now()));
    let n = 0;
    for (const [hash, t] of usage) {
      const pick = interval === 'lifetime' ? [t.usage, t.byok_usage] : interval === 'daily' ? [t.usage_daily, t.byok_usage_daily] : interval === 'weekly' ? [t.usage_weekly, t.byok_usage_weekly] : [t.usage_monthly, t.byok_usage_monthly];
      n += usdToNano(pick[0]) + (includeByok ? usdToNano(pick[1]) : 0);
      n += usdToNano(pending.get(hash) ?? 0);
      if (includeByok) n += usdToNano(pending.get(byokSpendId(hash)) ?? 0);
    }
    return n;
  }

  private async view(b: WorkspaceBudgetRow, includeByok: boolean) {
    return {
      id: b.id,
      workspace_id: b.workspace_id,
      limit_usd: b.limit_usd,
      reset_interval: b.interval === 'lifetime' ? null : b.interval,
      created_at: b.created_at,
      updated_at: b.updated_at,
      usage: await this.spent(b.workspace_id, b.interval, includeByok),
    };
  }

  async list(idOrSlug: string) {
    const ws = await this.deps.workspaces.get(idOrSlug);
    const { budgets, include_byok_in_budgets } = await this.deps.store.listWorkspaceBudgets(ws.id);
    return { data: await Promise.all(budgets.map((b) => this.view(b, include_byok_in_budgets))), include_byok_in_budgets };
  }

  async get(idOrSlug: string, interval: BudgetInterval) {
    const ws = await this.deps.workspaces.get(idOrSlug);
    const { budgets, include_byok_in_budgets } = await this.deps.store.listWorkspaceBudgets(ws.id);
    const b = budgets.find((x) => x.interval === interval);
    if (!b) throw notFound(`Workspace ${idOrSlug} has no ${interval} budget`);
    return { data: await this.view(b, include_byok_in_budgets), include_byok_in_budgets };
  }

  async put(idOrSlug: string, interval: BudgetInterval, body: { limit_usd: number; include_byok_in_budgets?: boolean }) {
    if (!(body.limit_usd > 0) || usdToNano(body.limit_usd) <= 0) throw badRequest('limit_usd: must be greater than 0 (at least $0.000000001)', { field: 'limit_usd', rule: 'minimum' });
    const ws = await this.deps.workspaces.get(idOrSlug);
    const at = new Date(this.now()).toISOString();
    const row: WorkspaceBudgetRow = { id: randomUUID(), workspace_id: ws.id, interval, limit_usd: nanoToUsd(usdToNano(body.limit_usd)), created_at: at, updated_at: at };
    const saved = await this.deps.store.saveWorkspaceBudget(row, body.include_byok_in_budgets, (all) => {
      const problem = budgetOrderProblem(all);
      if (problem) throw badRequest(problem, { field: 'limit_usd', rule: 'budget_order' });
    });
    this.changed(ws.id);
    const includeByok = body.include_byok_in_budgets ?? (await this.deps.store.listWorkspaceBudgets(ws.id)).include_byok_in_budgets;
    return { data: await this.view(saved, includeByok), include_byok_in_budgets: includeByok };
  }

  async delete(idOrSlug: string, interval: BudgetInterval): Promise<void> {
    const ws = await this.deps.workspaces.get(idOrSlug);
    const deleted = await this.deps.store.deleteWorkspaceBudget(ws.id, interval);
    this.changed(ws.id);
    if (!deleted) throw notFound(`Workspace ${idOrSlug} has no ${interval} budget`);
  }

  private changed(workspaceId: string): void {
    this.cache.delete(workspaceId);
    this.deps.bus?.publish('workspace_budget', workspaceId);
  }

  /** Whether the workspace is known (cached, fresh) to have no budget: no scope to reserve in. */
  knownEmpty(workspaceId: string): boolean {
    return this.cache.peek(workspaceId)?.budgets.length === 0;
  }

  /** The spend-control scopes of a workspace's budgets in their current windows (cached; no database read per request). */
  async scopes(workspaceId: string): Promise<ScopeSpec[]> {
    const e = await this.cache.get(workspaceId, async () => {
      const { budgets, include_byok_in_budgets } = await this.deps.store.listWorkspaceBudgets(workspaceId);
      return { budgets, includeByok: include_byok_in_budgets };
    });
    const includeByok = e.includeByok;
    const now = this.now();
    return e.budgets.map((b) => ({
      ...scopeId('workspace_budget', `${workspaceId}${includeByok ? '+byok' : ''}`, (b.interval === 'lifetime' ? null : b.interval) as SpendWindow, now, `workspace budget (${b.interval})`),
      limitNano: usdToNano(b.limit_usd),
      seed: () => this.spentNano(workspaceId, b.interval, includeByok),
      countsByok: includeByok,
    }));
  }
}
