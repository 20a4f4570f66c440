/**
 * Guardrails and organization settings: their input and view shapes, the validation of their lists (providers, models,
 * aliases) and the config file's `organization` section (services/guardrails.ts uses them).
 */
import { ConfigError } from '../config.js';
import type { EndpointDef, ProviderDef } from '../core/catalog-types.js';
import { matchesModel, ZDR_GROUPS, type GuardrailPolicyInput, type GuardrailScope, type OrgSettings } from '../core/policy.js';
import type { PolicyRefusal } from '../core/policy-refusals.js';
import type { ProviderSortBy } from '../core/provider-prefs.js';
import { contentFiltersView, validBuiltinFilters, validContentFilters } from './content-guardrails.js';
import type { BuiltinSlug, ContentFilterAction, ScanScope } from '../core/content-filters/types.js';
import type { ExclusionReason } from '../core/routing.js';
import { badRequest, HttpError } from '../core/errors.js';
import { PROVIDER_SORTS } from '../core/provider-prefs.js';
import { type GuardrailInterval, type GuardrailRow, type OrgSettingsRow } from '../store/types.js';
import type { CatalogService } from './catalog.js';
import { unresolvedMessage } from '../core/model-aliases.js';
import { rateLimitView, type RateLimitSetting } from '../core/rate-limits.js';

export const SETTINGS_ID = 'organization';

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
  /** Our extension (docs/guardrails.md, "Rate limits"), validated by the route as a key's; null removes it. */
  rate_limit?: RateLimitSetting | null;
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
    rate_limit: rateLimitView(g.rate_limit_requests, g.rate_limit_interval_s, g.rate_limit_tokens_per_minute),
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

export function policyInput(g: GuardrailRow, scope: GuardrailScope): GuardrailPolicyInput {
  return { ...g, scope };
}

export const toHttp = (r: PolicyRefusal) => new HttpError(r.status, r.message, r.metadata);

// ---------------------------------------------------------------------------
// Validation of provider and model lists against the catalog (API and config file)
// ---------------------------------------------------------------------------

export class Lists {
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

export function throwFirst(problems: Array<{ field: string; message: string }>): void {
  if (problems.length > 0) throw badRequest(`${problems[0].field}: ${problems[0].message}`, { field: problems[0].field, rule: 'unknown_entry' });
}

export const ORG_KEYS = ['allowed_providers', 'ignored_providers', 'allowed_models', 'ignored_models', 'default_provider_sort', 'data_collection', 'enforce_zdr', 'model_aliases'] as const;

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

/** The organization settings of an organization that never set them. */
export function defaultOrgSettings(now: string): OrgSettingsRow {
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
    created_at: now,
    updated_at: null,
  };
}

/** The settings a PATCH /organization/settings body makes of the current ones (the lists validated; the first problem thrown). */
export function patchOrgSettings(lists: Lists, current: OrgSettingsRow, patch: OrgSettingsPatch, now: string): OrgSettingsRow {
  const problems: Array<{ field: string; message: string }> = [];
  const next: OrgSettingsRow = { ...current, updated_at: now };
  for (const k of ['allowed_providers', 'ignored_providers'] as const) {
    const v = patch[k];
    if (v === undefined) continue;
    const list = v === null ? [] : lists.providers(v, k, problems);
    next[k] = list.length > 0 ? list : null;
  }
  for (const k of ['allowed_models', 'ignored_models'] as const) {
    const v = patch[k];
    if (v === undefined) continue;
    const list = v === null ? [] : lists.models(v, k, problems);
    next[k] = list.length > 0 ? list : null;
  }
  if (patch.model_aliases !== undefined) next.model_aliases = patch.model_aliases === null ? null : lists.aliases(patch.model_aliases, 'model_aliases', problems);
  throwFirst(problems);
  if (patch.default_provider_sort !== undefined) next.default_provider_sort = patch.default_provider_sort;
  if (patch.data_collection !== undefined) next.data_collection = patch.data_collection;
  if (patch.enforce_zdr !== undefined) next.enforce_zdr = patch.enforce_zdr;
  return next;
}

/** Applies the fields of a create or patch body to a row, validating the lists. */
export function applyGuardrailInput(lists: Lists, row: GuardrailRow, b: GuardrailInput, creating: boolean): GuardrailRow {
  const problems: Array<{ field: string; message: string }> = [];
  const out: GuardrailRow = { ...row };
  if (b.content_filters !== undefined) out.content_filters = validContentFilters(b.content_filters);
  if (b.content_filter_builtins !== undefined) out.content_filter_builtins = validBuiltinFilters(b.content_filter_builtins);
  if (b.name !== undefined) out.name = b.name;
  if (b.description !== undefined) out.description = b.description;
  if (b.limit_usd !== undefined) out.limit_usd = b.limit_usd;
  if (b.reset_interval !== undefined) out.reset_interval = b.reset_interval;
  if (b.include_byok_in_budgets !== undefined) out.include_byok_in_budgets = b.include_byok_in_budgets;
  if (b.rate_limit !== undefined) {
    out.rate_limit_requests = b.rate_limit?.requests ?? null;
    out.rate_limit_interval_s = b.rate_limit?.interval_s ?? null;
    out.rate_limit_tokens_per_minute = b.rate_limit?.tokens_per_minute ?? null;
  }
  for (const k of ['allowed_providers', 'ignored_providers'] as const) {
    const v = b[k];
    if (v !== undefined) out[k] = v === null ? null : lists.providers(v, k, problems);
  }
  for (const k of ['allowed_models', 'ignored_models'] as const) {
    const v = b[k];
    if (v !== undefined) out[k] = v === null ? null : lists.models(v, k, problems);
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

/** A new guardrail row: no limits, no lists, every switch off. */
export function blankGuardrail(id: string, name: string, workspaceId: string, isDefault: boolean, now: string): GuardrailRow {
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
    rate_limit_requests: null,
    rate_limit_interval_s: null,
    rate_limit_tokens_per_minute: null,
    created_at: now,
    updated_at: null,
  };
}
