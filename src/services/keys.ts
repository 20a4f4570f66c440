/**
 * API keys: creation (secret shown once), management, and authentication from an in-memory cache.
 * Only SHA-256 hashes are stored. A change to a key invalidates every instance's cached copy at once.
 */
import { keyNumericId } from '../core/io-log.js';
import { LRUCache } from 'lru-cache';
import { generateSecret, hashSecret, hashesEqual, labelFor } from '../core/keys.js';
import { limitRemaining, usageInWindow, windowStarts } from '../core/limits.js';
import { rateLimitView, type RateLimitSetting } from '../core/rate-limits.js';
import { badRequest, conflict, notFound, unauthorized } from '../core/errors.js';
import type { InvalidationBus } from './invalidation.js';
import type { KeyKind, KeyRow, KeyUsageTotals, LimitReset, Store } from '../store/types.js';

export interface CreateKeyInput {
  name: string;
  kind: KeyKind;
  limit?: number | null;
  limit_reset?: LimitReset | null;
  include_byok_in_limit?: boolean;
  expires_at?: string | null;
  workspace_id: string;
  creator_user_id: string | null;
  /** Use this secret instead of generating one (bootstrap from GATEWAY_ADMIN_KEY). */
  secret?: string;
  /** At most `requests` requests per `interval_s` seconds; null or absent: no rate limit. */
  rate_limit?: RateLimitSetting | null;
}

export type { RateLimitSetting } from '../core/rate-limits.js';

export type KeyPatch = Partial<Pick<KeyRow, 'name' | 'disabled' | 'limit' | 'limit_reset' | 'include_byok_in_limit' | 'expires_at'>> & { rate_limit?: RateLimitSetting | null };

interface CacheEntry {
  row: KeyRow;
  at: number;
  /** `expires_at` parsed once (ms), or null. */
  expiresMs: number | null;
}

/** Keys kept in memory per instance; beyond it the least recently used is dropped (and read again when next used). */
export const KEY_CACHE_MAX_ENTRIES = 10_000;

export class KeyService {
  private readonly cache: LRUCache<string, CacheEntry>;

  constructor(
    private readonly store: Store,
    private readonly bus: InvalidationBus,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    maxEntries = KEY_CACHE_MAX_ENTRIES,
  ) {
    this.cache = new LRUCache({ max: maxEntries });
    bus.subscribe((kind, id) => {
      if (kind === 'key') this.cache.delete(id);
    });
  }

  /** Builds a key row and its secret without storing anything. */
  static build(input: CreateKeyInput, nowIso: string): { row: KeyRow; secret: string } {
    const secret = input.secret ?? generateSecret();
    const row: KeyRow = {
      hash: hashSecret(secret),
      name: input.name,
      label: labelFor(secret),
      kind: input.kind,
      disabled: false,
      limit: input.limit ?? null,
      limit_reset: input.limit_reset ?? null,
      include_byok_in_limit: input.include_byok_in_limit ?? false,
      expires_at: input.expires_at ?? null,
      creator_user_id: input.creator_user_id,
      workspace_id: input.workspace_id,
      created_at: nowIso,
      updated_at: null,
      rate_limit_requests: input.rate_limit?.requests ?? null,
      rate_limit_interval_s: input.rate_limit?.interval_s ?? null,
      rate_limit_tokens_per_minute: input.rate_limit?.tokens_per_minute ?? null,
    };
    return { row, secret };
  }

  async create(input: CreateKeyInput): Promise<{ row: KeyRow; secret: string }> {
    if (input.expires_at && Date.parse(input.expires_at) <= this.now()) throw badRequest('expires_at must be in the future', { field: 'expires_at' });
    const built = KeyService.build(input, new Date(this.now()).toISOString());
    await this.store.insertKey(built.row);
    return built;
  }

  /**
   * Resolves a bearer secret to its key, or throws 401. Served from memory — then without a promise, and a refusal is
   * thrown synchronously (the hot path); the database is read only on a miss or after the cache TTL (a safety net
   * for instances without a shared invalidation channel).
   */
  authenticate(secret: string | undefined): KeyRow | Promise<KeyRow> {
    if (!secret) throw unauthorized('Missing Authorization header: send "Authorization: Bearer <key>"');
    const hash = hashSecret(secret);
    const now = this.now();
    const entry = this.cache.get(hash);
    if (entry && now - entry.at <= this.ttlMs) return this.usable(entry, hash, now);
    return this.load(hash, now);
  }

  private async load(hash: string, now: number): Promise<KeyRow> {
    const row = await this.store.getKey(hash);
    if (!row) {
      this.cache.delete(hash);
      throw unauthorized('Invalid API key');
    }
    const entry: CacheEntry = { row, at: now, expiresMs: row.expires_at ? Date.parse(row.expires_at) : null };
    this.cache.set(hash, entry);
    return this.usable(entry, hash, now);
  }

  private usable(entry: CacheEntry, hash: string, now: number): KeyRow {
    const row = entry.row;
    if (!hashesEqual(row.hash, hash)) throw unauthorized('Invalid API key');
    if (row.disabled) throw unauthorized('API key is disabled');
    if (entry.expiresMs !== null && entry.expiresMs <= now) throw unauthorized('API key has expired');
    return row;
  }

  async get(hash: string): Promise<KeyRow> {
    const row = await this.store.getKey(hash);
    if (!row) throw notFound(`API key ${hash} not found`);
    return row;
  }

  list(q: { workspace_id: string; include_disabled: boolean; offset: number; limit: number }): Promise<KeyRow[]> {
    return this.store.listKeys(q);
  }

  async update(hash: string, patch: KeyPatch): Promise<KeyRow> {
    if (patch.expires_at && Date.parse(patch.expires_at) <= this.now()) throw badRequest('expires_at must be in the future', { field: 'expires_at' });
    const current = await this.get(hash);
    if (patch.disabled === true && !current.disabled && current.kind === 'management') await this.refuseLastManagementKey();
    // Only the patchable fields: unknown body fields (or workspace_id, kind, …) must never reach the database.
    const known: Partial<KeyRow> = {};
    for (const k of ['name', 'disabled', 'limit', 'limit_reset', 'include_byok_in_limit', 'expires_at'] as const) {
      if (patch[k] !== undefined) (known as Record<string, unknown>)[k] = patch[k];
    }
    if (patch.rate_limit !== undefined) {
      known.rate_limit_requests = patch.rate_limit?.requests ?? null;
      known.rate_limit_interval_s = patch.rate_limit?.interval_s ?? null;
      known.rate_limit_tokens_per_minute = patch.rate_limit?.tokens_per_minute ?? null;
    }
    const row = await this.store.updateKey(hash, { ...known, updated_at: new Date(this.now()).toISOString() });
    this.bus.publish('key', hash);
    if (!row) throw notFound(`API key ${hash} not found`);
    return row;
  }

  async delete(hash: string): Promise<void> {
    const current = await this.get(hash);
    if (current.kind === 'management' && !current.disabled) await this.refuseLastManagementKey();
    const deleted = await this.store.deleteKey(hash);
    this.bus.publish('key', hash);
    if (!deleted) throw notFound(`API key ${hash} not found`);
  }

  private async refuseLastManagementKey(): Promise<void> {
    if ((await this.store.countActiveManagementKeys()) <= 1) {
      throw conflict('This is the last active management key; create another one before disabling or deleting it');
    }
  }

  /** Usage totals for keys, keyed by hash. */
  async usage(rows: KeyRow[]): Promise<Map<string, KeyUsageTotals>> {
    return this.store.getKeyUsage(
      rows.map((r) => r.hash),
      windowStarts(this.now()),
    );
  }

  /** The API representation of a key (spec's API key table). */
  static view(row: KeyRow, usage: KeyUsageTotals | undefined) {
    const u = usage ?? { usage: 0, usage_daily: 0, usage_weekly: 0, usage_monthly: 0, byok_usage: 0, byok_usage_daily: 0, byok_usage_weekly: 0, byok_usage_monthly: 0 };
    return {
      hash: row.hash,
      // The key's numeric id: what a workspace's `io_logging_api_key_ids` lists (core/io-log.ts).
      id: keyNumericId(row.hash),
      name: row.name,
      label: row.label,
      disabled: row.disabled,
      limit: row.limit,
      limit_remaining: limitRemaining(row.limit, usageInWindow(u, row.limit_reset, row.include_byok_in_limit)),
      limit_reset: row.limit_reset,
      include_byok_in_limit: row.include_byok_in_limit,
      ...u,
      created_at: row.created_at,
      updated_at: row.updated_at,
      expires_at: row.expires_at,
      creator_user_id: row.creator_user_id,
      // The hosted API's end-user id of keys it issues for its customers' users: none here (the official SDK reads it).
      external_user: null,
      workspace_id: row.workspace_id,
      is_management_key: row.kind === 'management',
      rate_limit: KeyService.rateLimit(row),
    };
  }

  /** The key's rate limit as the API shows it (`{ requests, interval, tokens_per_minute }`, each when set), or null. */
  static rateLimit(row: KeyRow): { requests?: number; interval?: string; tokens_per_minute?: number } | null {
    return rateLimitView(row.rate_limit_requests, row.rate_limit_interval_s, row.rate_limit_tokens_per_minute);
  }

}
