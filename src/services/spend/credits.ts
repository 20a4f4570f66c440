/**
 * The organization's credits (docs/spend.md, "Credits"): a ledger of top-ups and adjustments (every change one row,
 * never edited), a balance (`GET /credits`: total credits, total usage), and — when the operator turns credits on
 * (GATEWAY_CREDITS) — a scope of spend control: every request reserves against the balance and is refused (402) once
 * it is spent.
 */
import { randomUUID } from 'node:crypto';
import { badRequest } from '../../core/errors.js';
import { nanoToUsd, usdToNano } from '../../core/money.js';
import { scopeId } from '../../core/spend.js';
import type { CreditEntryRow, Store } from '../../store/types.js';
import type { GenerationRecorder } from '../generations.js';
import type { InvalidationBus } from '../invalidation.js';
import type { ScopeSpec } from './types.js';

/** The cached total of credits is read again after this long (and at once after a change on any instance). */
const TOTAL_TTL_MS = 5_000;

export interface CreditInput {
  amount_usd: number;
  kind?: 'top_up' | 'adjustment';
  note?: string | null;
}

export class CreditService {
  private total: { nano: number; at: number } | null = null;
  private orgId: string | null = null;

  constructor(private readonly deps: { store: Store; recorder: Pick<GenerationRecorder, 'unflushedSpend'>; enabled: boolean; bus?: InvalidationBus; now?: () => number }) {
    deps.bus?.subscribe((kind) => {
      if (kind === 'credits') this.total = null;
    });
  }

  get enabled(): boolean {
    return this.deps.enabled;
  }

  private now(): number {
    return this.deps.now ? this.deps.now() : Date.now();
  }

  /** Everything billed so far, nano-dollars: written records plus those of this instance not written yet. */
  private async usageNano(): Promise<number> {
    // Not yet written, taken before the store is read (it seeds spend control): a batch written during the read is
    // never missed. BYOK spend (kept apart, `byokSpendId`) is paid on the workspace's own provider account.
    let n = 0;
    for (const [id, usd] of this.deps.recorder.unflushedSpend) if (!id.endsWith('+byok')) n += usdToNano(usd);
    return n + usdToNano(await this.deps.store.organizationUsage());
  }

  private async totalNano(): Promise<number> {
    if (this.total && this.now() - this.total.at < TOTAL_TTL_MS) return this.total.nano;
    const nano = usdToNano(await this.deps.store.creditTotal());
    this.total = { nano, at: this.now() };
    return nano;
  }

  /** GET /credits. */
  async balance(): Promise<{ total_credits: number; total_usage: number }> {
    const [credits, usage] = await Promise.all([this.deps.store.creditTotal(), this.usageNano()]);
    return { total_credits: credits, total_usage: nanoToUsd(usage) };
  }

  /** A top-up (positive) or an adjustment (either sign); the balance may not go below zero credits in total. */
  async add(input: CreditInput, createdBy: string | null): Promise<CreditEntryRow> {
    const kind = input.kind ?? 'top_up';
    const nano = Number.isFinite(input.amount_usd) ? usdToNano(input.amount_usd) : 0;
    if (nano === 0) throw badRequest('amount_usd: must be a non-zero amount of at least $0.000000001', { field: 'amount_usd', rule: 'not_zero' });
    if (kind === 'top_up' && nano < 0) throw badRequest('amount_usd: a top_up must be positive (use kind "adjustment" to take credits away)', { field: 'amount_usd', rule: 'minimum' });
    const total = usdToNano(await this.deps.store.creditTotal());
    if (total + nano < 0) throw badRequest(`amount_usd: the total of credits would become negative ($${nanoToUsd(total)} purchased so far)`, { field: 'amount_usd', rule: 'minimum' });
    const row: CreditEntryRow = { id: randomUUID(), amount_usd: nanoToUsd(nano), kind, note: input.note ?? null, created_by: createdBy, created_at: new Date(this.now()).toISOString() };
    await this.deps.store.insertCreditEntry(row);
    this.total = null;
    this.deps.bus?.publish('credits', '*');
    return row;
  }

  list(offset: number, limit: number) {
    return this.deps.store.listCreditEntries(offset, limit);
  }

  /** The balance as a scope of spend control (credits on), else null. */
  async scope(): Promise<ScopeSpec | null> {
    if (!this.deps.enabled) return null;
    // Named by the organization's id: gateways of two organizations sharing one Redis never share a balance.
    this.orgId ??= (await this.deps.store.getOrganization())?.id ?? 'organization';
    return { ...scopeId('credits', this.orgId, null, this.now(), 'credits'), limitNano: await this.totalNano(), seed: () => this.usageNano() };
  }
}
