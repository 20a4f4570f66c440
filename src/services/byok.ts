/**
 * BYOK credentials (docs/byok.md): a workspace's own provider keys, managed through /byok and used by routing before
 * (or, as fallbacks, after) the operator's shared keys.
 *
 * Secrets are sealed at rest (services/secrets-crypto.ts) and never returned or logged. Routing reads an in-memory
 * table of every live credential (secrets opened once, when loaded): no database read per request. A change reloads
 * the table on every instance (the invalidation bus, Redis across instances) and the table is also reloaded in the
 * background once older than the key cache TTL (instances that missed a message while Redis was down).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { badRequest, HttpError, notFound } from '../core/errors.js';
import type { Attempt, ByokRef, ByokRouting } from '../core/routing.js';
import type { ProviderDef } from '../core/catalog-types.js';
import type { ByokCredentialPatch, ByokCredentialRow } from '../store/byok.js';
import type { KeyRow, Store } from '../store/types.js';
import { keyProblem } from '../providers/registry.js';
import type { CatalogService } from './catalog.js';
import type { InvalidationBus } from './invalidation.js';
import type { SecretKeyring } from './secrets-crypto.js';
import type { WorkspaceService } from './workspaces.js';

export interface ByokInput {
  provider: string;
  key: string;
  name?: string | null;
  /** A workspace id or slug; null: every workspace (global); undefined: the default workspace. */
  workspace_id?: string | null;
  disabled?: boolean;
  is_fallback?: boolean;
  always_use?: boolean;
  sort_order?: number;
  allowed_models?: string[] | null;
  allowed_api_key_hashes?: string[] | null;
  allowed_user_ids?: string[] | null;
}

export type ByokUpdate = Partial<Omit<ByokInput, 'provider' | 'workspace_id'>>;

/** The masked label of a key: its first three and last four characters (`sk-...AbCd`), less for short keys. */
export function maskKey(key: string): string {
  if (key.length >= 16) return `${key.slice(0, 3)}...${key.slice(-4)}`;
  if (key.length >= 8) return `...${key.slice(-2)}`;
  return '...';
}

export function byokView(r: ByokCredentialRow) {
  return {
    id: r.id,
    provider: r.provider,
    workspace_id: r.workspace_id,
    name: r.name,
    label: r.label,
    disabled: r.disabled,
    is_fallback: r.is_fallback,
    always_use: r.always_use,
    sort_order: r.sort_order,
    allowed_models: r.allowed_models,
    allowed_api_key_hashes: r.allowed_api_key_hashes,
    allowed_user_ids: r.allowed_user_ids,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** A live credential in the routing table, its secret opened. */
interface Loaded {
  row: ByokCredentialRow;
  ref: ByokRef;
  secret: string;
}

const ORDER = (a: Loaded, b: Loaded) => a.row.sort_order - b.row.sort_order || a.row.created_at.localeCompare(b.row.created_at) || a.row.id.localeCompare(b.row.id);

export class ByokService {
  /** Live, enabled credentials whose secret opened, by workspace id ('' = global), in sort order. */
  private table = new Map<string, Loaded[]>();
  private secrets = new Map<string, string>();
  /** Live credentials that are disabled, and those whose secret could not be opened (by id). */
  private disabled = new Set<string>();
  private unreadable = new Set<string>();
  private loadedAt = -Infinity;
  private queued: Promise<void> | null = null;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: { store: Store; bus: InvalidationBus; keyring: SecretKeyring; catalog: CatalogService; workspaces: WorkspaceService; log?: Logger; ttlMs: number; now?: () => number },
  ) {
    deps.bus.subscribe((kind) => {
      if (kind === 'byok') void this.refresh().catch(() => undefined);
    });
  }

  private now(): number {
    return this.deps.now ? this.deps.now() : Date.now();
  }

  /** Reloads the routing table (once per burst of invalidations); resolves once a load started after the call ended. */
  refresh(): Promise<void> {
    if (this.queued) return this.queued;
    const p = this.chain.then(() => {
      this.queued = null;
      return this.load();
    });
    this.queued = p;
    this.chain = p.catch((err: Error) => this.deps.log?.warn({ err: err.message }, 'byok: reloading credentials failed; the previous table stays'));
    return p;
  }

  /** Reads every live credential, opens its secret and seals again those sealed with an older key (rotation). */
  private async load(): Promise<void> {
    const rows = await this.deps.store.listActiveByokCredentials();
    const table = new Map<string, Loaded[]>();
    const secrets = new Map<string, string>();
    const disabled = new Set<string>();
    const unreadable = new Set<string>();
    for (const row of rows) {
      let secret: string;
      try {
        secret = this.deps.keyring.decrypt(row.secret);
      } catch {
        unreadable.add(row.id);
        continue;
      }
      if (this.deps.keyring.needsReseal(row.secret)) await this.deps.store.updateByokCredential(row.id, { secret: this.deps.keyring.encrypt(secret) });
      secrets.set(row.id, secret);
      if (row.disabled) {
        disabled.add(row.id);
        continue;
      }
      const ws = row.workspace_id ?? '';
      const list = table.get(ws) ?? [];
      list.push({ row, secret, ref: { id: row.id, provider: row.provider, isFallback: row.is_fallback, alwaysUse: row.always_use } });
      table.set(ws, list);
    }
    for (const list of table.values()) list.sort(ORDER);
    if (unreadable.size > 0) this.deps.log?.warn({ credentials: unreadable.size }, 'byok: credentials sealed with a key that is neither GATEWAY_ENCRYPTION_KEY nor in GATEWAY_ENCRYPTION_KEY_PREVIOUS are not used');
    this.table = table;
    this.secrets = secrets;
    this.disabled = disabled;
    this.unreadable = unreadable;
    this.loadedAt = this.now();
  }

  /** The credentials a key's requests may use (undefined: none); no database read. */
  routing(key: KeyRow): ByokRouting | undefined {
    if (this.now() - this.loadedAt > this.deps.ttlMs) void this.refresh().catch(() => undefined);
    const own = this.table.get(key.workspace_id);
    const global = this.table.get('');
    // Most keys have no credentials: nothing is allocated for them (this runs on every routed request).
    if (!own?.length && !global?.length) return undefined;
    const usable = [...(own ?? []), ...(global ?? [])].filter((c) => allows(c.row.allowed_api_key_hashes, key.hash) && allows(c.row.allowed_user_ids, key.creator_user_id)).sort(ORDER);
    if (usable.length === 0) return undefined;
    const providers = new Set(usable.map((c) => c.row.provider));
    return {
      has: (p: ProviderDef) => providers.has(p.slug),
      credentials: (p: ProviderDef, model: string) => usable.filter((c) => c.row.provider === p.slug && allows(c.row.allowed_models, model)).map((c) => c.ref),
    };
  }

  /**
   * The secret of the first credential (in routing order) that a key may use with a provider, whatever the model: for
   * calls that are not a model's (a file stored on the provider's own Files API, docs/files.md). Null when none.
   */
  secretFor(key: KeyRow, provider: string): string | null {
    return this.credentialFor(key, provider)?.secret ?? null;
  }

  /** The same credential with its id (a file stored on a provider records it: docs/files.md). */
  credentialFor(key: KeyRow, provider: string): { id: string; secret: string } | null {
    const own = this.table.get(key.workspace_id) ?? [];
    const global = this.table.get('') ?? [];
    const c = [...own, ...global].filter((x) => x.row.provider === provider && allows(x.row.allowed_api_key_hashes, key.hash) && allows(x.row.allowed_user_ids, key.creator_user_id)).sort(ORDER)[0];
    return c ? { id: c.row.id, secret: c.secret } : null;
  }

  /** The secret of a credential by id, disabled ones included (deleting a file it stored); null once deleted. */
  secretById(id: string): string | null {
    return this.secrets.get(id) ?? null;
  }

  /**
   * The secret of one credential, for calls that must go on that very credential whatever the key's routing says now
   * (a video job is polled and downloaded on the credential that submitted it, docs/videos.md): else why not — it was
   * deleted, disabled, or its secret cannot be opened. Waits for the first load of the table; no database read after.
   */
  async credential(id: string): Promise<{ secret: string } | { problem: 'deleted' | 'disabled' | 'unreadable' }> {
    if (this.loadedAt === -Infinity) await this.refresh();
    else if (this.now() - this.loadedAt > this.deps.ttlMs) void this.refresh().catch(() => undefined);
    const secret = this.secrets.get(id);
    if (secret === undefined) return { problem: this.unreadable.has(id) ? 'unreadable' : 'deleted' };
    if (this.disabled.has(id)) return { problem: 'disabled' };
    return { secret };
  }

  /** The secret an attempt runs with: its BYOK credential's, else the operator's key for the provider. */
  apiKey(a: Pick<Attempt, 'provider' | 'byok'>): string | null {
    if (!a.byok) return this.deps.catalog.apiKey(a.provider);
    return this.secrets.get(a.byok.id) ?? null;
  }

  // ---- management (GET/POST /byok, GET/PATCH/DELETE /byok/{id}) ---------------------------------------------------

  private requireKeyring(): void {
    if (!this.deps.keyring.enabled) throw new HttpError(503, 'BYOK credentials need GATEWAY_ENCRYPTION_KEY (the key they are encrypted with at rest); the operator has not set it', { error_type: 'encryption_key_missing' });
  }

  private checkProvider(slug: string): ProviderDef {
    const p = this.deps.catalog.catalog.providers.find((x) => x.slug === slug);
    if (!p) throw badRequest(`provider: unknown provider "${slug}" (GET /providers lists them)`, { field: 'provider' });
    return p;
  }

  /** Provider-specific shapes of a key (an AWS key pair for Bedrock, a service account for Vertex): 400 naming `key`. */
  private checkKey(p: ProviderDef, key: string): void {
    const problem = keyProblem(p, key);
    if (problem) throw badRequest(`key: not a ${p.name} credential: ${problem}`, { field: 'key' });
  }

  private async checkKeyHashes(hashes: string[] | null | undefined): Promise<void> {
    for (const h of hashes ?? []) {
      if (!(await this.deps.store.getKey(h))) throw badRequest(`allowed_api_key_hashes: no API key has hash ${h}`, { field: 'allowed_api_key_hashes' });
    }
  }

  /** Publishes the change and waits for this instance's table to include it (the next request routes with it). */
  private async changed(): Promise<void> {
    this.deps.bus.publish('byok', '*');
    await this.refresh();
  }

  async create(input: ByokInput) {
    this.requireKeyring();
    this.checkKey(this.checkProvider(input.provider), input.key);
    await this.checkKeyHashes(input.allowed_api_key_hashes);
    const workspaceId = input.workspace_id === null ? null : (await this.deps.workspaces.resolve(input.workspace_id)).id;
    const now = new Date(this.now()).toISOString();
    const row: ByokCredentialRow = {
      id: randomUUID(),
      provider: input.provider,
      workspace_id: workspaceId,
      name: input.name ?? null,
      label: maskKey(input.key),
      secret: this.deps.keyring.encrypt(input.key),
      disabled: input.disabled ?? false,
      is_fallback: input.is_fallback ?? false,
      always_use: input.always_use ?? false,
      sort_order: input.sort_order ?? (await this.deps.store.nextByokSortOrder(input.provider, workspaceId)),
      allowed_models: input.allowed_models ?? null,
      allowed_api_key_hashes: input.allowed_api_key_hashes ?? null,
      allowed_user_ids: input.allowed_user_ids ?? null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    await this.deps.store.insertByokCredential(row);
    await this.changed();
    return byokView(row);
  }

  /** Credentials of a workspace (default: the default workspace; `global`: those of every workspace), oldest first. */
  async list(q: { workspace_id?: string; provider?: string; offset: number; limit: number }) {
    const ws = q.workspace_id === 'global' ? null : (await this.deps.workspaces.resolve(q.workspace_id)).id;
    const rows = (await this.deps.store.listActiveByokCredentials()).filter((r) => r.workspace_id === ws && (!q.provider || r.provider === q.provider));
    return { data: rows.slice(q.offset, q.offset + q.limit).map(byokView), total_count: rows.length };
  }

  async get(id: string) {
    const row = await this.deps.store.getByokCredential(id);
    if (!row) throw notFound(`BYOK credential ${id} not found`);
    return row;
  }

  async update(id: string, patch: ByokUpdate) {
    const current = await this.get(id);
    if (patch.key !== undefined) this.checkKey(this.checkProvider(current.provider), patch.key);
    await this.checkKeyHashes(patch.allowed_api_key_hashes);
    const set: ByokCredentialPatch = { updated_at: new Date(this.now()).toISOString() };
    for (const k of ['name', 'disabled', 'is_fallback', 'always_use', 'sort_order', 'allowed_models', 'allowed_api_key_hashes', 'allowed_user_ids'] as const) {
      if (patch[k] !== undefined) (set as Record<string, unknown>)[k] = patch[k];
    }
    if (patch.key !== undefined) {
      // Rotation: the new key overwrites the old one, and the label is made again.
      this.requireKeyring();
      set.secret = this.deps.keyring.encrypt(patch.key);
      set.label = maskKey(patch.key);
    }
    if (!(await this.deps.store.updateByokCredential(id, set))) throw notFound(`BYOK credential ${id} not found`);
    await this.changed();
    return byokView(await this.get(id));
  }

  /** Soft delete: the row stays (its id in old records), its secret is wiped. */
  async remove(id: string): Promise<void> {
    const now = new Date(this.now()).toISOString();
    if (!(await this.deps.store.updateByokCredential(id, { secret: '', label: '...', deleted_at: now, updated_at: now }))) throw notFound(`BYOK credential ${id} not found`);
    await this.changed();
  }
}

function allows(list: readonly string[] | null, value: string | null): boolean {
  return list === null || (value !== null && list.includes(value));
}

/** The key an attempt sends: its BYOK credential's secret, else the operator's key for the provider. */
export function attemptKey(deps: { catalog: CatalogService; byok?: ByokService }, a: Pick<Attempt, 'provider' | 'byok'>): string | null {
  return deps.byok ? deps.byok.apiKey(a) : deps.catalog.apiKey(a.provider);
}
