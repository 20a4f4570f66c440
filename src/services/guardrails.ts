/**
 * Guardrails and organization settings.
 *
 * Management: guardrail CRUD, assignments to keys and members (a key or member holds at most one; a new assignment
 * replaces the old), the workspace default guardrail (id derived from the workspace id, materialized by its first
 * PATCH), and the organization's routing preferences and privacy rules (seeded from the config file's `organization`
 * section, then managed through `/organization/settings`).
 *
 * Enforcement: the effective policy of a key (src/core/policy.ts) is cached in memory per key hash and dropped on any
 * guardrail, assignment or settings change (published on the invalidation bus, so every instance drops it; a TTL is
 * the safety net). The request path therefore does no database round trip unless a budget needs fresh spend figures.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { ConfigError } from '../config.js';
import type { EndpointDef, ModelDef, ProviderDef } from '../core/catalog-types.js';
import { limitRemaining, usageInWindow, windowStarts } from '../core/limits.js';
import { nanoToUsd, usdToNano } from '../core/money.js';
import {
  budgetRefusal,
  combinePolicies,
  endpointVerdict,
  matchesModel,
  modelAccess,
  refusal,
  workspaceGuardrailId,
  workspaceGuardrailName,
  ZDR_GROUPS,
  type Budget,
  type EffectivePolicy,
  type GuardrailPolicyInput,
  type GuardrailScope,
  type ModelAccess,
  type OrgSettings,
  type PolicyRefusal,
} from '../core/policy.js';
import type { ProviderSortBy } from '../core/provider-prefs.js';
import { contentFiltersView, filtersOf, screenInput, screenOutput, validContentFilters, validBuiltinFilters } from './content-guardrails.js';
import type { CompiledFilter, PipelineEntry } from '../core/content-filters/index.js';
import type { BuiltinSlug, ContentFilterAction, ScanScope } from '../core/content-filters/types.js';
import type { ExclusionReason, RouteCatalog } from '../core/routing.js';
import { badRequest, HttpError, notFound } from '../core/errors.js';
import { PROVIDER_SORTS } from '../core/provider-prefs.js';
import {
  ConflictError,
  type GuardrailInterval,
  type GuardrailRow,
  type KeyRow,
  type KeyUsageTotals,
  type OrgSettingsRow,
  type Store,
  type WorkspaceRow,
} from '../store/types.js';
import type { CatalogService } from './catalog.js';
import { unresolvedMessage } from '../core/model-aliases.js';
import type { GenerationRecorder } from './generations.js';
import type { InvalidationBus } from './invalidation.js';
import type { SpendGate } from './spend/gate.js';
import type { SpendAsk } from '../core/spend-ask.js';
import type { AttemptHooks, AttemptTarget } from './attempts/runner.js';
import { mapConflict, type WorkspaceService } from './workspaces.js';

const SETTINGS_ID = 'organization';
/** Spend figures behind budgets are re-read after every generation flush, and at least this often. */
const SPEND_TTL_MS = 5_000;

export interface GuardrailInput {
  name?: string;
  description?: string | null;
  workspace_id?: string;
  limit_usd?: number | null;
  reset_interval?: GuardrailInterval | null;
  include_byok_in_budgets?: boolean;
  allowed_models?: string[] | null;
  ignored_models?: string[] | null;
  allowed_providers?: string[] | null;
  ignored_providers?: string[] | null;
  enforce_zdr?: boolean | null;
  enforce_zdr_anthropic?: boolean | null;
  enforce_zdr_openai?: boolean | null;
  enforce_zdr_google?: boolean | null;
  enforce_zdr_xai?: boolean | null;
  enforce_zdr_other?: boolean | null;
  enable_free_model_publication?: boolean | null;
  enable_free_model_training?: boolean | null;
  enable_paid_model_training?: boolean | null;
  content_filters?: Array<{ pattern: string; action: ContentFilterAction; label?: string | null }> | null;
  content_filter_builtins?: Array<{ slug: BuiltinSlug; action: ContentFilterAction; label?: string; scan_scope?: ScanScope }> | null;
}

/** `model_aliases`: the organization's alias map (docs/agents.md, "Model ids"): client model id → catalog id. */
export type OrgSettingsPatch = Partial<OrgSettings> & { model_aliases?: Record<string, string> | null };

/** Most entries of the organization's alias map. */
export const MAX_ORG_ALIASES = 1000;

/** What the chat service needs from the policy for one request. */
export interface PolicyDecision {
  /** The requested models the policy leaves (in order). */
  models: string[];
  /** planRoute's policy filter; undefined when nothing is restricted. */
  endpointPolicy?: (endpoint: EndpointDef, provider: ProviderDef) => ExclusionReason | undefined;
  defaultSort: ProviderSortBy | null;
}

export function guardrailView(g: GuardrailRow) {
  const zdr = ZDR_GROUPS.map((grp) => g[`enforce_zdr_${grp}`]);
  return {
    id: g.id,
    name: g.name,
    description: g.description,
    workspace_id: g.workspace_id,
    limit_usd: g.limit_usd,
    reset_interval: g.reset_interval,
    include_byok_in_budgets: g.include_byok_in_budgets,
    allowed_models: g.allowed_models,
    ignored_models: g.ignored_models,
    allowed_providers: g.allowed_providers,
    ignored_providers: g.ignored_providers,
    // Deprecated summary: true or false when every per-vendor switch agrees, null otherwise.
    enforce_zdr: zdr.every(Boolean) ? true : zdr.some(Boolean) ? null : false,
    enforce_zdr_anthropic: g.enforce_zdr_anthropic,
    enforce_zdr_openai: g.enforce_zdr_openai,
    enforce_zdr_google: g.enforce_zdr_google,
    enforce_zdr_xai: g.enforce_zdr_xai,
    enforce_zdr_other: g.enforce_zdr_other,
    enable_free_model_publication: g.enable_free_model_publication,
    enable_free_model_training: g.enable_free_model_training,
    enable_paid_model_training: g.enable_paid_model_training,
    ...contentFiltersView(g),
    is_workspace_default: g.is_workspace_default,
    created_at: g.created_at,
    updated_at: g.updated_at,
  };
}

export function orgSettingsView(s: OrgSettingsRow) {
  return {
    allowed_providers: s.allowed_providers,
    ignored_providers: s.ignored_providers,
    allowed_models: s.allowed_models,
    ignored_models: s.ignored_models,
    default_provider_sort: s.default_provider_sort,
    data_collection: s.data_collection,
    enforce_zdr: s.enforce_zdr,
    model_aliases: s.model_aliases ?? null,
    updated_at: s.updated_at,
  };
}

function policyInput(g: GuardrailRow, scope: GuardrailScope): GuardrailPolicyInput {
  return { ...g, scope };
}

const toHttp = (r: PolicyRefusal) => new HttpError(r.status, r.message, r.metadata);

// ---------------------------------------------------------------------------
// Validation of provider and model lists against the catalog (API and config file)
// ---------------------------------------------------------------------------

class Lists {
  private readonly providerTokens = new Set<string>();
  constructor(private readonly catalog: CatalogService) {
    for (const p of catalog.catalog.providers) {
      this.providerTokens.add(p.slug.toLowerCase());
      this.providerTokens.add(p.name.toLowerCase());
    }
    for (const e of catalog.catalog.endpoints) this.providerTokens.add(e.tag.toLowerCase());
  }

  /** Trimmed, deduplicated provider entries; each must name a provider (slug or name) or an endpoint tag. */
  providers(list: string[], field: string, problems: Array<{ field: string; message: string }>): string[] {
    const out: string[] = [];
    list.forEach((raw, i) => {
      const e = raw.trim();
      if (!this.providerTokens.has(e.toLowerCase())) problems.push({ field: `${field}[${i}]`, message: `"${raw}" is not a known provider (slug, name or endpoint tag)` });
      else if (!out.some((x) => x.toLowerCase() === e.toLowerCase())) out.push(e);
    });
    return out;
  }

  /**
   * The organization's alias map: each key a model id as clients send it (no spaces, not a catalog id), each value
   * anything that resolves to one catalog model (stored as that model's id). Empty → null.
   */
  aliases(map: Record<string, unknown>, field: string, problems: Array<{ field: string; message: string }>): Record<string, string> | null {
    const out: Record<string, string> = {};
    const entries = Object.entries(map);
    if (entries.length > MAX_ORG_ALIASES) problems.push({ field, message: `at most ${MAX_ORG_ALIASES} aliases` });
    for (const [alias, target] of entries) {
      const where = `${field}.${alias}`;
      if (!/^[^\s]{1,200}$/.test(alias)) problems.push({ field: where, message: 'an alias is 1 to 200 characters without spaces' });
      else if (this.catalog.aliasIndex.ids.has(alias)) problems.push({ field: where, message: `${alias} is a model id of the catalog already` });
      else if (typeof target !== 'string') problems.push({ field: where, message: 'must be a model id' });
      else {
        const r = this.catalog.resolve(target);
        if (r.kind === 'found') out[alias] = r.id;
        else problems.push({ field: where, message: unresolvedMessage(target, r) });
      }
    }
    return Object.keys(out).length > 0 ? out : null;
  }

  /** Model entries as canonical slugs, deduplicated; each must name a model of the catalog (id or canonical slug). */
  models(list: string[], field: string, problems: Array<{ field: string; message: string }>): string[] {
    const out: string[] = [];
    list.forEach((raw, i) => {
      const m = this.catalog.catalog.models.find((x) => matchesModel(raw, x));
      if (!m) problems.push({ field: `${field}[${i}]`, message: `"${raw}" is not a model of the catalog` });
      else if (!out.includes(m.canonical_slug)) out.push(m.canonical_slug);
    });
    return out;
  }
}

function throwFirst(problems: Array<{ field: string; message: string }>): void {
  if (problems.length > 0) throw badRequest(`${problems[0].field}: ${problems[0].message}`, { field: problems[0].field, rule: 'unknown_entry' });
}

const ORG_KEYS = ['allowed_providers', 'ignored_providers', 'allowed_models', 'ignored_models', 'default_provider_sort', 'data_collection', 'enforce_zdr', 'model_aliases'] as const;

/**
 * The config file's `organization` section, validated against the catalog. Throws ConfigError listing every problem.
 * Returns null when the section is absent.
 */
export function orgSettingsFromConfig(raw: unknown, catalog: CatalogService): OrgSettingsPatch | null {
  if (raw === undefined || raw === null) return null;
  const problems: string[] = [];
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(['organization (config file) must be a mapping']);
  const o = raw as Record<string, unknown>;
  const lists = new Lists(catalog);
  const out: OrgSettingsPatch = {};
  for (const k of Object.keys(o)) if (!(ORG_KEYS as readonly string[]).includes(k)) problems.push(`organization.${k} (config file) is not a known setting; known: ${ORG_KEYS.join(', ')}`);
  for (const k of ['allowed_providers', 'ignored_providers', 'allowed_models', 'ignored_models'] as const) {
    const v = o[k];
    if (v === undefined || v === null) continue;
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string' && x.trim() !== '')) {
      problems.push(`organization.${k} must be a list of non-empty strings`);
      continue;
    }
    const p: Array<{ field: string; message: string }> = [];
    const list = k.endsWith('providers') ? lists.providers(v, `organization.${k}`, p) : lists.models(v, `organization.${k}`, p);
    for (const x of p) problems.push(`${x.field}: ${x.message}`);
    out[k] = list.length > 0 ? list : null;
  }
  if (o.default_provider_sort !== undefined && o.default_provider_sort !== null) {
    if (!(PROVIDER_SORTS as readonly unknown[]).includes(o.default_provider_sort)) problems.push(`organization.default_provider_sort must be one of ${PROVIDER_SORTS.join(', ')}`);
    else out.default_provider_sort = o.default_provider_sort as ProviderSortBy;
  }
  if (o.data_collection !== undefined) {
    if (o.data_collection !== 'allow' && o.data_collection !== 'deny') problems.push('organization.data_collection must be allow or deny');
    else out.data_collection = o.data_collection;
  }
  if (o.enforce_zdr !== undefined) {
    if (typeof o.enforce_zdr !== 'boolean') problems.push('organization.enforce_zdr must be true or false');
    else out.enforce_zdr = o.enforce_zdr;
  }
  if (o.model_aliases !== undefined && o.model_aliases !== null) {
    if (typeof o.model_aliases !== 'object' || Array.isArray(o.model_aliases)) problems.push('organization.model_aliases must map model ids as clients send them to catalog models');
    else {
      const p: Array<{ field: string; message: string }> = [];
      out.model_aliases = lists.aliases(o.model_aliases as Record<string, unknown>, 'organization.model_aliases', p);
      for (const x of p) problems.push(`${x.field}: ${x.message}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out;
}

// ---------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------

/** A key's own spending limit seen as a budget of its own scope (same spend figures as guardrail budgets). */
function keyBudget(key: KeyRow, limitUsd: number): Budget {
  return { guardrailId: '', name: 'key limit', scope: 'key', limitUsd, resetInterval: key.limit_reset, includeByok: key.include_byok_in_limit };
}

/** The 402 of a key whose spending limit is reached (model calls, speech, videos). */
export function keyLimitError(key: KeyRow, limit: number, spent: number): HttpError {
  return new HttpError(402, `Key limit reached: $${spent.toFixed(6)} spent of $${limit} (${key.limit_reset ?? 'no reset'})`, {
    error_type: 'payment_required',
    limit,
    spent,
    limit_reset: key.limit_reset,
  });
}

export class GuardrailService {
  private readonly policies = new Map<string, { policy: EffectivePolicy; at: number }>();
  private settingsCache: { row: OrgSettingsRow; at: number } | null = null;
  private readonly spend = new Map<string, { hashes: string[]; totals: KeyUsageTotals; reserved: number; flushes: string; at: number }>();
  /** Bumped whenever video reservations change on this instance (cached spend figures include them). */
  private reservations = 0;
  /** Per key: the tail of this instance's chain of video admissions and hold ends (one at a time per key). */
  private readonly admitting = new Map<string, Promise<unknown>>();
  /** Bumped by every invalidation: a policy computed across one is not cached. */
  private generation = 0;
  private orgId: string | null = null;
  private readonly lists: Lists;

  constructor(
    private readonly deps: {
      store: Store;
      bus: InvalidationBus;
      catalog: CatalogService;
      workspaces: WorkspaceService;
      recorder: GenerationRecorder;
      ttlMs: number;
      now?: () => number;
      log?: Logger;
      /** The config file's `organization` section (validated), seeding the settings on first start. */
      seed?: OrgSettingsPatch | null;
    },
  ) {
    this.lists = new Lists(deps.catalog);
    deps.bus.subscribe((kind, id) => {
      if (kind === 'policy' || kind === 'workspace') this.clear();
      else if (kind === 'key') {
        this.generation++;
        this.policies.delete(id);
      }
    });
  }

  private now(): number {
    return this.deps.now ? this.deps.now() : Date.now();
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  private clear(): void {
    this.generation++;
    this.policies.clear();
    this.settingsCache = null;
    this.spend.clear();
  }

  /** Tells every instance that policies changed. */
  private changed(): void {
    this.deps.bus.publish('policy', '*');
  }

  /** Seeds the organization settings from the config file when the database has none yet. */
  async init(): Promise<void> {
    const seed = this.deps.seed;
    if (!seed) return;
    const row: OrgSettingsRow = { ...this.defaults(), ...seed, created_at: this.iso() };
    const inserted = await this.deps.store.seedOrgSettings(row);
    if (!inserted) {
      const current = await this.deps.store.getOrgSettings();
      const differs = current && (Object.keys(seed) as Array<keyof OrgSettingsPatch>).some((k) => JSON.stringify(current[k]) !== JSON.stringify(seed[k]));
      if (differs) this.deps.log?.info('the organization settings in the database differ from the config file; the database wins (PATCH /organization/settings changes them)');
    }
  }

  // ---- organization settings ---------------------------------------------------------------------

  private defaults(): OrgSettingsRow {
    return {
      id: SETTINGS_ID,
      allowed_providers: null,
      ignored_providers: null,
      allowed_models: null,
      ignored_models: null,
      default_provider_sort: null,
      data_collection: 'allow',
      enforce_zdr: false,
      model_aliases: null,
      created_at: this.iso(),
      updated_at: null,
    };
  }

  /** The organization settings (cached; defaults when never set). */
  async settings(): Promise<OrgSettingsRow> {
    const hit = this.settingsCache;
    if (hit && this.now() - hit.at < this.deps.ttlMs) return hit.row;
    const gen = this.generation;
    const row = (await this.deps.store.getOrgSettings()) ?? this.defaults();
    if (gen === this.generation) this.settingsCache = { row, at: this.now() };
    return row;
  }

  async updateSettings(patch: OrgSettingsPatch): Promise<OrgSettingsRow> {
    const current = (await this.deps.store.getOrgSettings()) ?? this.defaults();
    const problems: Array<{ field: string; message: string }> = [];
    const next: OrgSettingsRow = { ...current, updated_at: this.iso() };
    for (const k of ['allowed_providers', 'ignored_providers'] as const) {
      const v = patch[k];
      if (v === undefined) continue;
      const list = v === null ? [] : this.lists.providers(v, k, problems);
      next[k] = list.length > 0 ? list : null;
    }
    for (const k of ['allowed_models', 'ignored_models'] as const) {
      const v = patch[k];
      if (v === undefined) continue;
      const list = v === null ? [] : this.lists.models(v, k, problems);
      next[k] = list.length > 0 ? list : null;
    }
    if (patch.model_aliases !== undefined) next.model_aliases = patch.model_aliases === null ? null : this.lists.aliases(patch.model_aliases, 'model_aliases', problems);
    throwFirst(problems);
    if (patch.default_provider_sort !== undefined) next.default_provider_sort = patch.default_provider_sort;
    if (patch.data_collection !== undefined) next.data_collection = patch.data_collection;
    if (patch.enforce_zdr !== undefined) next.enforce_zdr = patch.enforce_zdr;
    await this.deps.store.saveOrgSettings(next);
    this.changed();
    return next;
  }

  // ---- guardrails --------------------------------------------------------------------------------

  /** The organization's id (GET /key's `organization_id`, guardrail member assignments). */
  async organizationId(): Promise<string> {
    this.orgId ??= (await this.deps.store.getOrganization())?.id ?? 'org';
    return this.orgId;
  }

  async list(workspaceIdOrSlug: string | undefined, offset: number, limit: number) {
    const ws = await this.deps.workspaces.resolve(workspaceIdOrSlug);
    return this.deps.store.listGuardrails(ws.id, offset, limit);
  }

  /** The workspace whose default guardrail has this id, if any. */
  private async workspaceOfDefault(id: string): Promise<WorkspaceRow | null> {
    for (let offset = 0; ; offset += 100) {
      const page = await this.deps.workspaces.list(offset, 100);
      const ws = page.rows.find((w) => workspaceGuardrailId(w.id) === id);
      if (ws) return ws;
      if (page.rows.length < 100) return null;
    }
  }

  async get(id: string): Promise<GuardrailRow> {
    const row = await this.deps.store.getGuardrail(id);
    if (row) return row;
    if (await this.workspaceOfDefault(id)) throw notFound(`Guardrail ${id} is the default guardrail of a workspace and has not been configured yet; PATCH it to configure it`);
    throw notFound(`Guardrail ${id} not found`);
  }

  /** Applies the fields of a create or patch body to a row, validating the lists. */
  private apply(row: GuardrailRow, b: GuardrailInput, creating: boolean): GuardrailRow {
    const problems: Array<{ field: string; message: string }> = [];
    const out: GuardrailRow = { ...row };
    if (b.content_filters !== undefined) out.content_filters = validContentFilters(b.content_filters);
    if (b.content_filter_builtins !== undefined) out.content_filter_builtins = validBuiltinFilters(b.content_filter_builtins);
    if (b.name !== undefined) out.name = b.name;
    if (b.description !== undefined) out.description = b.description;
    if (b.limit_usd !== undefined) out.limit_usd = b.limit_usd;
    if (b.reset_interval !== undefined) out.reset_interval = b.reset_interval;
    if (b.include_byok_in_budgets !== undefined) out.include_byok_in_budgets = b.include_byok_in_budgets;
    for (const k of ['allowed_providers', 'ignored_providers'] as const) {
      const v = b[k];
      if (v !== undefined) out[k] = v === null ? null : this.lists.providers(v, k, problems);
    }
    for (const k of ['allowed_models', 'ignored_models'] as const) {
      const v = b[k];
      if (v !== undefined) out[k] = v === null ? null : this.lists.models(v, k, problems);
    }
    throwFirst(problems);
    // The deprecated enforce_zdr fills every per-vendor switch the body leaves unset.
    for (const grp of ZDR_GROUPS) {
      const f = `enforce_zdr_${grp}` as const;
      const v = b[f] ?? b.enforce_zdr;
      if (v !== undefined && v !== null) out[f] = v;
      else if (creating) out[f] = false;
    }
    for (const k of ['enable_free_model_publication', 'enable_free_model_training', 'enable_paid_model_training'] as const) {
      if (b[k] !== undefined) out[k] = b[k] ?? null;
    }
    return out;
  }

  private blank(id: string, name: string, workspaceId: string, isDefault: boolean): GuardrailRow {
    return {
      id,
      name,
      description: null,
      workspace_id: workspaceId,
      is_workspace_default: isDefault,
      limit_usd: null,
      reset_interval: null,
      include_byok_in_budgets: false,
      allowed_models: null,
      ignored_models: null,
      allowed_providers: null,
      ignored_providers: null,
      enforce_zdr_anthropic: false,
      enforce_zdr_openai: false,
      enforce_zdr_google: false,
      enforce_zdr_xai: false,
      enforce_zdr_other: false,
      enable_free_model_publication: null,
      enable_free_model_training: null,
      enable_paid_model_training: null,
      content_filters: null,
      content_filter_builtins: null,
      created_at: this.iso(),
      updated_at: null,
    };
  }

  async create(b: GuardrailInput & { name: string }): Promise<GuardrailRow> {
    const ws = await this.deps.workspaces.resolve(b.workspace_id);
    const row = this.apply(this.blank(randomUUID(), b.name, ws.id, false), b, true);
    await mapConflict(this.deps.store.insertGuardrail(row));
    return row;
  }

  async update(id: string, b: GuardrailInput): Promise<GuardrailRow> {
    let current = await this.deps.store.getGuardrail(id);
    if (!current) {
      // The first PATCH of a workspace's default guardrail materializes it.
      const ws = await this.workspaceOfDefault(id);
      if (!ws) throw notFound(`Guardrail ${id} not found`);
      if (b.name !== undefined && b.name !== workspaceGuardrailName(ws.id)) throw badRequest('name: the name of a workspace default guardrail is derived from its workspace and cannot be changed', { field: 'name', rule: 'immutable' });
      const row = this.apply(this.blank(id, workspaceGuardrailName(ws.id), ws.id, true), b, true);
      try {
        await this.deps.store.insertGuardrail(row);
        this.changed();
        return row;
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
        current = await this.deps.store.getGuardrail(id); // materialized concurrently: update it instead
        if (!current) throw err;
      }
    }
    if (current.is_workspace_default && b.name !== undefined && b.name !== current.name) {
      throw badRequest('name: the name of a workspace default guardrail is derived from its workspace and cannot be changed', { field: 'name', rule: 'immutable' });
    }
    const next = this.apply(current, b, false);
    const row = await this.deps.store.updateGuardrail(id, { ...next, updated_at: this.iso() });
    this.changed();
    if (!row) throw notFound(`Guardrail ${id} not found`);
    return row;
  }

  async delete(id: string): Promise<void> {
    const deleted = await this.deps.store.deleteGuardrail(id);
    this.changed();
    if (!deleted) throw notFound(`Guardrail ${id} not found`);
  }

  private async assignable(id: string): Promise<GuardrailRow> {
    const g = await this.get(id);
    if (g.is_workspace_default) throw badRequest('A workspace default guardrail applies to all traffic of its workspace and cannot be assigned', { field: 'id', rule: 'workspace_default' });
    return g;
  }

  async assignKeys(id: string, hashes: string[], assignedBy: string | null): Promise<number> {
    await this.assignable(id);
    for (const [i, h] of hashes.entries()) {
      if (!(await this.deps.store.getKey(h))) throw badRequest(`key_hashes[${i}]: no API key has the hash ${h}`, { field: `key_hashes[${i}]`, rule: 'unknown_entry' });
    }
    const n = await mapConflict(this.deps.store.assignGuardrail({ guardrail_id: id, kind: 'key', ids: hashes, assigned_by: assignedBy, now: this.iso() }));
    this.changed();
    return n;
  }

  async unassignKeys(id: string, hashes: string[]): Promise<number> {
    await this.get(id);
    const n = await this.deps.store.unassignGuardrail(id, 'key', hashes);
    this.changed();
    return n;
  }

  async assignMembers(id: string, userIds: string[], assignedBy: string | null): Promise<number> {
    await this.assignable(id);
    for (const [i, u] of userIds.entries()) {
      if (!(await this.deps.store.getMember(u))) throw badRequest(`member_user_ids[${i}]: ${u} is not a member of the organization`, { field: `member_user_ids[${i}]`, rule: 'unknown_entry' });
    }
    const n = await mapConflict(this.deps.store.assignGuardrail({ guardrail_id: id, kind: 'member', ids: userIds, assigned_by: assignedBy, now: this.iso() }));
    this.changed();
    return n;
  }

  async unassignMembers(id: string, userIds: string[]): Promise<number> {
    await this.get(id);
    const n = await this.deps.store.unassignGuardrail(id, 'member', userIds);
    this.changed();
    return n;
  }

  async keyAssignments(id: string | null, offset: number, limit: number) {
    if (id !== null) await this.get(id);
    const page = await this.deps.store.listKeyAssignments(id, offset, limit);
    return {
      data: page.rows.map((a) => ({ id: a.id, key_hash: a.key_hash, guardrail_id: a.guardrail_id, key_name: a.key_name, key_label: a.key_label, assigned_by: a.assigned_by, created_at: a.created_at })),
      total_count: page.total,
    };
  }

  async memberAssignments(id: string | null, offset: number, limit: number) {
    if (id !== null) await this.get(id);
    const page = await this.deps.store.listMemberAssignments(id, offset, limit);
    const organization_id = await this.organizationId();
    return {
      data: page.rows.map((a) => ({ id: a.id, user_id: a.user_id as string, organization_id, guardrail_id: a.guardrail_id, assigned_by: a.assigned_by, created_at: a.created_at })),
      total_count: page.total,
    };
  }

  // ---- enforcement -------------------------------------------------------------------------------

  /** The content filters compiled with each cached policy (docs/guardrails.md). */
  private readonly filters = new WeakMap<EffectivePolicy, CompiledFilter[] | null>();

  /**
   * Content guardrails on a request's inputs, before any upstream call: a `block` match → 403 naming the guardrail;
   * `redact` matches are replaced in a copy of `body`; returns it and the `gateway_metadata.pipeline` entries.
   */
  async screenInput(key: KeyRow, api: string, body: Record<string, unknown>): Promise<{ body: Record<string, unknown>; pipeline: PipelineEntry[] }> {
    const policy = await this.policyFor(key);
    return screenInput(this.filters.get(policy) ?? null, api, body);
  }

  /** Content guardrails on a non-streamed reply (client shape, in place): redactions, pipeline; a block → the 403 to answer. */
  async screenOutput(key: KeyRow, api: string, body: Record<string, unknown>, inputPipeline?: PipelineEntry[]): Promise<HttpError | null> {
    return screenOutput(this.filters.get(await this.policyFor(key)) ?? null, api, body, inputPipeline);
  }

  /** The effective policy of a key: organization settings, then its key, member and workspace guardrails. */
  async policyFor(key: KeyRow): Promise<EffectivePolicy> {
    const hit = this.policies.get(key.hash);
    if (hit && this.now() - hit.at < this.deps.ttlMs) return hit.policy;
    const gen = this.generation;
    const [settings, g] = await Promise.all([
      this.settings(),
      this.deps.store.guardrailsFor({ key_hash: key.hash, user_id: key.creator_user_id, workspace_id: key.workspace_id }),
    ]);
    const guardrails: GuardrailPolicyInput[] = [];
    if (g.key) guardrails.push(policyInput(g.key, 'key'));
    if (g.member) guardrails.push(policyInput(g.member, 'member'));
    if (g.workspace) guardrails.push(policyInput(g.workspace, 'workspace'));
    const policy = combinePolicies({ ...settings, default_provider_sort: settings.default_provider_sort as ProviderSortBy | null }, guardrails);
    const scoped = [{ row: g.key, scope: 'key' as const }, { row: g.member, scope: 'member' as const }, { row: g.workspace, scope: 'workspace' as const }];
    this.filters.set(policy, filtersOf(scoped.filter((x): x is { row: GuardrailRow; scope: GuardrailScope } => x.row !== null)));
    if (gen === this.generation) {
      if (this.policies.size > 100_000) this.policies.clear();
      this.policies.set(key.hash, { policy, at: this.now() });
    }
    return policy;
  }

  /**
   * USD spent against a budget: the scope's keys' usage in the budget's window, plus what is not yet flushed, plus
   * what their unfinished video jobs hold. `fresh` reads the database whatever the cache holds.
   */
  private async spent(b: Budget, key: KeyRow, withPending = true, fresh = false): Promise<number> {
    const member = b.scope === 'member' && key.creator_user_id ? key.creator_user_id : null;
    const scopeKey = b.scope === 'workspace' ? `w:${key.workspace_id}` : member ? `m:${member}` : `k:${key.hash}`;
    // The cached database total stays exact while no batch was written: by this instance, or — with Redis — any.
    let shared = this.deps.recorder.shared;
    // Redis unreachable: this instance's own figures (its unwritten spend, its flushes) until it is back.
    const epoch = shared ? await shared.epoch().catch(() => null) : null;
    if (epoch === null) shared = null;
    const flushes = `${epoch ?? this.deps.recorder.flushes}:${this.reservations}`;
    let e = this.spend.get(scopeKey);
    if (fresh || !e || e.flushes !== flushes || this.now() - e.at > SPEND_TTL_MS) {
      const hashes =
        b.scope === 'workspace'
          ? await this.deps.store.listKeyHashes({ workspace_id: key.workspace_id })
          : member
            ? await this.deps.store.listKeyHashes({ creator_user_id: member })
            : [key.hash];
      if (!hashes.includes(key.hash)) hashes.push(key.hash);
      const usage = await this.deps.store.getKeyUsage(hashes, windowStarts(this.now()));
      // Summed in nano-dollars (exact), kept in USD.
      const totals: KeyUsageTotals = { usage: 0, usage_daily: 0, usage_weekly: 0, usage_monthly: 0, byok_usage: 0, byok_usage_daily: 0, byok_usage_weekly: 0, byok_usage_monthly: 0 };
      for (const t of usage.values()) for (const k of Object.keys(totals) as Array<keyof KeyUsageTotals>) totals[k] += usdToNano(t[k]);
      for (const k of Object.keys(totals) as Array<keyof KeyUsageTotals>) totals[k] = nanoToUsd(totals[k]);
      let reserved = 0;
      for (const usd of (await this.deps.store.videoReservations(hashes)).values()) reserved += usdToNano(usd);
      reserved = nanoToUsd(reserved);
      e = { hashes, totals, reserved, flushes, at: this.now() };
      if (this.spend.size > 100_000) this.spend.clear();
      this.spend.set(scopeKey, e);
    }
    // A reserved video cost lands in the current window when the job completes (BYOK is not known before then).
    let spent = usdToNano(usageInWindow(e.totals, b.resetInterval, b.includeByok)) + usdToNano(e.reserved);
    if (!withPending) return nanoToUsd(spent);
    const pending = shared ? await shared.pending(e.hashes).catch(() => null) : null;
    if (pending !== null) spent += usdToNano(pending);
    else for (const h of e.hashes) spent += usdToNano(this.deps.recorder.unflushedSpend.get(h) ?? 0);
    return nanoToUsd(spent);
  }

  /**
   * The key's own spending limit (`limit`, `limit_reset`, `include_byok_in_limit`): USD spent in the current window,
   * when the key has a limit and has reached it; null otherwise. Same figures as budgets: stored usage plus spend not
   * yet flushed.
   */
  async keyLimitReached(key: KeyRow): Promise<{ limit: number; spent: number } | null> {
    if (key.limit === null) return null;
    const spent = await this.limitSpend(key, key.limit);
    return spent >= key.limit ? { limit: key.limit, spent } : null;
  }

  /**
   * A key's `limit_remaining`: its limit minus its spend in the limit's window — written records, records not yet
   * written (of this instance, or of every instance with Redis) and video jobs' holds; null without a limit.
   */
  async limitRemaining(key: KeyRow): Promise<number | null> {
    if (key.limit === null) return null;
    return limitRemaining(key.limit, await this.spent(keyBudget(key, key.limit), key, true));
  }

  /**
   * What counts against the key's own limit: its spend in the limit's window (see `spent`; `fresh` bypasses the
   * cache). Requests in flight are reservations of spend control (docs/spend.md), not counted here.
   */
  private async limitSpend(key: KeyRow, limit: number, fresh = false): Promise<number> {
    return this.spent(keyBudget(key, limit), key, true, fresh);
  }

  /**
   * A request that may be answered without any attempt (a response cache hit) still needs every limit of the key to
   * have room left: 402 (or 503) otherwise. Nothing stays reserved.
   */
  async checkRoom(key: KeyRow): Promise<void> {
    if (this.gate) (await this.gate.admit(key, () => null))(null);
  }

  /**
   * The spend seam of a key's request (services/attempts/runner.ts, docs/spend.md): before each attempt, its maximum
   * cost at that endpoint's prices (`askOf`) is reserved in every limit of the key — a fallback to another endpoint
   * reserves afresh at its prices — and settled to the real cost (or released) by the runner. 402 when a limit has
   * no room, 503 when the shared counters are unreachable (fail closed). None without spend control.
   */
  spendHooks<A extends AttemptTarget>(key: KeyRow, askOf: (a: A) => SpendAsk | null): AttemptHooks<A> | undefined {
    const gate = this.gate;
    if (!gate) return undefined;
    return {
      admit: async (a) => {
        // Video jobs hold against the key's limit outside spend control (yet): a limit they fill refuses here.
        if (key.limit !== null) {
          const reached = await this.keyLimitReached(key);
          if (reached) throw keyLimitError(key, reached.limit, reached.spent);
        }
        // Sized once, and only when some limit needs it.
        let ask: SpendAsk | null | undefined;
        const sized = () => (ask === undefined ? (ask = askOf(a)) : ask);
        const tokens = gate.reserveTokens(key, () => sized()?.tokens ?? 1);
        const held = tokens ? await tokens : null;
        let settle: (cost: number | null) => void;
        try {
          settle = await gate.admit(key, sized);
        } catch (err) {
          held?.release();
          throw err;
        }
        return {
          settle: (cost, used) => {
            settle(cost);
            held?.settle(used ?? held.amountNano);
          },
          release: () => {
            settle(null);
            held?.release();
          },
        };
      },
    };
  }

  /**
   * Admits a video job against the key's spending limit and stores it (`insert`) in one step: refused (402) when the
   * key's spend — stored, not yet written, what its unfinished video jobs hold, and its requests in flight at their
   * average cost — has reached the limit, or would pass it with the `reserve` this job holds (the most it can bill).
   * Admissions of one key run one at a time: on this instance in memory, across instances under the store's key lock
   * (so every figure read is fresh, not cached).
   */
  async admitVideo(key: KeyRow, reserve: number, insert: () => Promise<void>): Promise<void> {
    const limit = key.limit;
    if (limit === null) {
      await insert();
      if (reserve > 0) this.reservationsChanged();
      return;
    }
    const run = async () => {
      const spent = await this.limitSpend(key, limit, true);
      if (spent >= limit) throw keyLimitError(key, limit, spent);
      if (spent + reserve > limit + 1e-9) {
        throw new HttpError(402, `Key limit would be exceeded: this video can cost up to $${reserve.toFixed(6)}, and $${spent.toFixed(6)} of $${limit} is spent or held (${key.limit_reset ?? 'no reset'})`, {
          error_type: 'payment_required',
          limit,
          spent,
          reserve,
          limit_reset: key.limit_reset,
        });
      }
      await insert();
      this.reservationsChanged();
    };
    await this.oneAtATime(key.hash, run);
  }

  /**
   * Ends a video job's hold: `end` moves the job to its terminal status and records its generation (whose cost then
   * counts as spend not yet written). It runs as one step against the key's admissions, so that no admission can read
   * the job as ended before its cost counts — it would see neither the hold nor the cost. Resolves with `end`'s result.
   */
  async endVideoHold<T>(keyHash: string, end: () => Promise<T>): Promise<T> {
    return this.oneAtATime(keyHash, async () => {
      const result = await end();
      this.reservationsChanged();
      return result;
    });
  }

  /** Runs `fn` alone for the key: after this instance's earlier calls for it, and under the store's key lock. */
  private async oneAtATime<T>(keyHash: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.admitting.get(keyHash) ?? Promise.resolve();
    const mine = prev.then(() => this.deps.store.withKeyLock(keyHash, fn));
    const tail = mine.catch(() => undefined);
    this.admitting.set(keyHash, tail);
    try {
      return await mine;
    } finally {
      if (this.admitting.get(keyHash) === tail) this.admitting.delete(keyHash);
    }
  }

  /** Video reservations changed (a job was admitted or ended): cached spend is read again, here and — with Redis — everywhere. */
  reservationsChanged(): void {
    this.reservations++;
    this.deps.recorder.shared?.bump().catch(() => undefined);
  }

  private gate: SpendGate | null = null;

  /** Hands admissions of callers that give a request's maximum cost to spend control. */
  useSpend(gate: SpendGate): void {
    this.gate = gate;
  }

  /** The guardrail budgets that apply to a key (spend-control scopes). */
  async budgetsOf(key: KeyRow): Promise<Budget[]> {
    return (await this.policyFor(key)).budgets;
  }

  /** USD spent against a budget, read fresh (seeds a spend-control scope). */
  budgetSpent(b: Budget, key: KeyRow): Promise<number> {
    return this.spent(b, key, true, true);
  }

  /** The first budget of the policy that is spent, if any. */
  async exhaustedBudget(key: KeyRow, policy: EffectivePolicy): Promise<{ budget: Budget; spent: number } | null> {
    for (const budget of policy.budgets) {
      const spent = await this.spent(budget, key);
      if (spent >= budget.limitUsd) return { budget, spent };
    }
    return null;
  }

  private access(policy: EffectivePolicy, modelId: string): ModelAccess {
    // An embeddings, transcription or rerank model's endpoints are those its own API routes.
    const cat = this.deps.catalog;
    const route = cat.otherApi.get(modelId)?.route ?? cat.route;
    return modelAccess(policy, route, cat.hasCredentials, modelId);
  }

  /**
   * Chat: refuses a request whose budget is spent (403) or whose every requested model the policy blocks (403 for a
   * guardrail's model or provider list, else 404, see `refusal`); otherwise the models left and the routing filter.
   */
  /**
   * One model of a non-chat API (speech, embeddings, transcriptions) over that API's route: a spent budget or a blocked
   * model is refused here (403/404, see `refusal`); otherwise planRoute's endpoint filter (none when nothing is
   * restricted) and the organization's default sort.
   */
  async admitModel(key: KeyRow, route: RouteCatalog, model: string): Promise<{ endpointPolicy?: PolicyDecision['endpointPolicy']; defaultSort: ProviderSortBy | null }> {
    const policy = await this.policyFor(key);
    if (policy.budgets.length > 0) {
      const spent = await this.exhaustedBudget(key, policy);
      if (spent) throw toHttp(budgetRefusal(spent.budget, spent.spent));
    }
    if (policy.rules.length === 0) return { defaultSort: policy.defaultSort };
    const access = modelAccess(policy, route, this.deps.catalog.hasCredentials, model);
    if (access.blocked) throw toHttp(refusal([{ model, access }]));
    return { endpointPolicy: (ep, provider) => endpointVerdict(policy, ep, provider)?.reason, defaultSort: policy.defaultSort };
  }

  async enforce(key: KeyRow, models: string[]): Promise<PolicyDecision> {
    const policy = await this.policyFor(key);
    if (policy.budgets.length > 0) {
      const spent = await this.exhaustedBudget(key, policy);
      if (spent) throw toHttp(budgetRefusal(spent.budget, spent.spent));
    }
    if (policy.rules.length === 0) return { models, defaultSort: policy.defaultSort };
    const kept: string[] = [];
    const blocked: Array<{ model: string; access: ModelAccess }> = [];
    for (const id of models) {
      const access = this.access(policy, id);
      if (access.blocked) blocked.push({ model: id, access });
      else kept.push(id);
    }
    if (blocked.length > 0 && !kept.some((id) => this.deps.catalog.route.models.has(id))) throw toHttp(refusal(blocked));
    return { models: kept, defaultSort: policy.defaultSort, endpointPolicy: (ep, provider) => endpointVerdict(policy, ep, provider)?.reason };
  }

  /** `GET /models/user`: every model the key can reach, with the endpoints left to it (none at all once a budget is spent). */
  async userModels(key: KeyRow): Promise<Array<{ model: ModelDef; endpoints: EndpointDef[] }>> {
    const policy = await this.policyFor(key);
    if (policy.budgets.length > 0 && (await this.exhaustedBudget(key, policy))) return [];
    return this.deps.catalog.catalog.models.map((model) => ({ model, endpoints: this.access(policy, model.id).endpoints })).filter((x) => x.endpoints.length > 0);
  }
}

export { workspaceGuardrailId };
