/**
 * Organization settings and guardrails as one effective policy per key: which models and which endpoints the key
 * may reach, and which budgets it spends against.
 *
 * PURE logic: no I/O. The same functions decide for `GET /models/user` and for chat routing (`planRoute` receives
 * `endpointVerdict` as its policy filter), so the listing and the routing cannot disagree.
 *
 * Combining (reference notes §11): allowlists intersect (an endpoint or model must pass every allowlist),
 * ignore lists union, zero data retention and data-collection denial are ORed. Every rule keeps its source (the
 * organization, or a guardrail with its scope) so that a refusal can name what refused.
 */
import type { GuardrailRequestLimit, GuardrailTokenLimit } from './rate-limits.js';
import type { EndpointDef, ModelDef, ProviderDef } from './catalog-types.js';
import type { ProviderSortBy } from './provider-prefs.js';
import { effectiveDataPolicy, matchesProvider, type RouteCatalog } from './routing.js';

export type GuardrailScope = 'key' | 'member' | 'workspace';
export type BudgetInterval = 'daily' | 'weekly' | 'monthly';

/** Model groups of the per-vendor zero-data-retention switches (`enforce_zdr_<group>`). */
export type ZdrGroup = 'anthropic' | 'openai' | 'google' | 'xai' | 'other';
export const ZDR_GROUPS: readonly ZdrGroup[] = ['anthropic', 'openai', 'google', 'xai', 'other'];

export type PolicySource = { kind: 'organization' } | { kind: 'guardrail'; id: string; name: string; scope: GuardrailScope };

/** One layer of restrictions (the organization's settings, or one guardrail). */
export interface PolicyRule {
  source: PolicySource;
  /** null = no allowlist. Entries match like `provider.only` (slug, tag or display name, case-insensitive). */
  allowedProviders: string[] | null;
  ignoredProviders: string[];
  /** null = no allowlist. Entries are model ids or canonical slugs. */
  allowedModels: string[] | null;
  ignoredModels: string[];
  /** Model groups for which only zero-data-retention endpoints are allowed. */
  zdrGroups: ZdrGroup[];
  /** No endpoint that trains on or retains prompts. */
  denyDataCollection: boolean;
  /** No free (resp. paid) endpoint that trains on prompts (guardrail `enable_free_model_training: false`, …). */
  denyTrainingFree: boolean;
  denyTrainingPaid: boolean;
}

export interface Budget {
  guardrailId: string;
  name: string;
  scope: GuardrailScope;
  limitUsd: number;
  /** null = lifetime. */
  resetInterval: BudgetInterval | null;
  includeByok: boolean;
}

export interface EffectivePolicy {
  /** The organization's rule first (when it restricts anything), then key, member and workspace guardrails. */
  rules: PolicyRule[];
  /** The organization's default provider sort (a workspace's own default and the request's sort win). */
  defaultSort: ProviderSortBy | null;
  guardrails: Array<{ id: string; name: string; scope: GuardrailScope }>;
  budgets: Budget[];
  /**
   * The guardrails' request and token rate limits as they apply to the key the policy is for (counter ids name their
   * owner: src/core/rate-limits.ts `guardrailRateLimits`); null when none applies, so the request path checks only that.
   */
  requestLimits: GuardrailRequestLimit[] | null;
  tokenLimits: GuardrailTokenLimit[] | null;
}

/** Organization settings as stored (`GET /organization/settings`). */
export interface OrgSettings {
  allowed_providers: string[] | null;
  ignored_providers: string[] | null;
  allowed_models: string[] | null;
  ignored_models: string[] | null;
  default_provider_sort: ProviderSortBy | null;
  data_collection: 'allow' | 'deny';
  enforce_zdr: boolean;
}

/** The policy-relevant fields of a guardrail. */
export interface GuardrailPolicyInput {
  id: string;
  name: string;
  scope: GuardrailScope;
  allowed_providers: string[] | null;
  ignored_providers: string[] | null;
  allowed_models: string[] | null;
  ignored_models: string[] | null;
  enforce_zdr_anthropic: boolean;
  enforce_zdr_openai: boolean;
  enforce_zdr_google: boolean;
  enforce_zdr_xai: boolean;
  enforce_zdr_other: boolean;
  enable_free_model_training: boolean | null;
  enable_paid_model_training: boolean | null;
  limit_usd: number | null;
  reset_interval: BudgetInterval | null;
  include_byok_in_budgets: boolean;
}

export type ModelReason = 'allowed_models' | 'ignored_models';
export type EndpointReason = 'allowed_providers' | 'ignored_providers' | 'data_policy:zdr' | 'data_policy:training' | 'data_policy:retention';
export type PolicyReason = ModelReason | EndpointReason;

export interface Verdict<R extends PolicyReason = PolicyReason> {
  reason: R;
  source: PolicySource;
}

/** Order in which endpoint rules are evaluated (the same as planRoute's hard filters). */
const ENDPOINT_REASONS: readonly EndpointReason[] = ['allowed_providers', 'ignored_providers', 'data_policy:zdr', 'data_policy:training', 'data_policy:retention'];
const VARIANT = /:(free|nitro|floor|exacto|online|thinking|extended)$/;

// ---------------------------------------------------------------------------
// Building
// ---------------------------------------------------------------------------

const nonEmpty = (l: string[] | null | undefined): string[] | null => (l && l.length > 0 ? l : null);

export function orgRule(s: OrgSettings): PolicyRule | null {
  const rule: PolicyRule = {
    source: { kind: 'organization' },
    allowedProviders: nonEmpty(s.allowed_providers),
    ignoredProviders: s.ignored_providers ?? [],
    allowedModels: nonEmpty(s.allowed_models),
    ignoredModels: s.ignored_models ?? [],
    zdrGroups: s.enforce_zdr ? [...ZDR_GROUPS] : [],
    denyDataCollection: s.data_collection === 'deny',
    denyTrainingFree: false,
    denyTrainingPaid: false,
  };
  return restricts(rule) ? rule : null;
}

export function guardrailRule(g: GuardrailPolicyInput): PolicyRule {
  return {
    source: { kind: 'guardrail', id: g.id, name: g.name, scope: g.scope },
    allowedProviders: nonEmpty(g.allowed_providers),
    ignoredProviders: g.ignored_providers ?? [],
    allowedModels: nonEmpty(g.allowed_models),
    ignoredModels: g.ignored_models ?? [],
    zdrGroups: ZDR_GROUPS.filter((grp) => g[`enforce_zdr_${grp}`]),
    denyDataCollection: false,
    denyTrainingFree: g.enable_free_model_training === false,
    denyTrainingPaid: g.enable_paid_model_training === false,
  };
}

function restricts(r: PolicyRule): boolean {
  return (
    r.allowedProviders !== null ||
    r.ignoredProviders.length > 0 ||
    r.allowedModels !== null ||
    r.ignoredModels.length > 0 ||
    r.zdrGroups.length > 0 ||
    r.denyDataCollection ||
    r.denyTrainingFree ||
    r.denyTrainingPaid
  );
}

/** The effective policy of a key: the organization's settings, then the guardrails that apply (key, member, workspace). */
export function combinePolicies(org: OrgSettings | null, guardrails: GuardrailPolicyInput[]): EffectivePolicy {
  const rules: PolicyRule[] = [];
  const o = org ? orgRule(org) : null;
  if (o) rules.push(o);
  for (const g of guardrails) {
    const r = guardrailRule(g);
    if (restricts(r)) rules.push(r);
  }
  return {
    rules,
    defaultSort: org?.default_provider_sort ?? null,
    guardrails: guardrails.map((g) => ({ id: g.id, name: g.name, scope: g.scope })),
    budgets: guardrails
      .filter((g) => g.limit_usd !== null && g.limit_usd !== undefined)
      .map((g) => ({ guardrailId: g.id, name: g.name, scope: g.scope, limitUsd: g.limit_usd as number, resetInterval: g.reset_interval, includeByok: g.include_byok_in_budgets })),
    // Set per key by the guardrail service (the counters' owners are the key's).
    requestLimits: null,
    tokenLimits: null,
  };
}

// ---------------------------------------------------------------------------
// Deciding
// ---------------------------------------------------------------------------

/** The per-vendor ZDR group of a model, from its author. */
export function zdrGroup(modelId: string): ZdrGroup {
  const author = modelId.split('/')[0].toLowerCase();
  if (author === 'anthropic' || author === 'openai' || author === 'google') return author;
  if (author === 'x-ai' || author === 'xai') return 'xai';
  return 'other';
}

/** A model list entry (id or canonical slug; a `:variant` suffix is ignored) names this model. */
export function matchesModel(entry: string, model: Pick<ModelDef, 'id' | 'canonical_slug'>): boolean {
  const e = entry.trim().toLowerCase().replace(VARIANT, '');
  return e === model.id.toLowerCase() || e === model.canonical_slug.toLowerCase();
}

/** Why the policy refuses a model outright (model allow/ignore lists), or null. */
export function modelVerdict(policy: EffectivePolicy, model: Pick<ModelDef, 'id' | 'canonical_slug'>): Verdict<ModelReason> | null {
  for (const r of policy.rules) if (r.allowedModels && !r.allowedModels.some((e) => matchesModel(e, model))) return { reason: 'allowed_models', source: r.source };
  for (const r of policy.rules) if (r.ignoredModels.some((e) => matchesModel(e, model))) return { reason: 'ignored_models', source: r.source };
  return null;
}

export function modelAllowed(policy: EffectivePolicy, model: Pick<ModelDef, 'id' | 'canonical_slug'>): boolean {
  return modelVerdict(policy, model) === null;
}

function isFree(ep: EndpointDef): boolean {
  const p = ep.pricing;
  return p !== null && Number(p.prompt) === 0 && Number(p.completion) === 0 && Number(p.request ?? 0) === 0;
}

/**
 * Why the policy refuses an endpoint (providers, ZDR, data collection), or null. Reasons are checked in planRoute's
 * order; within a reason, the first rule (organization, key, member, workspace) is the one named.
 */
export function endpointVerdict(policy: EffectivePolicy, ep: EndpointDef, provider: ProviderDef): Verdict<EndpointReason> | null {
  if (policy.rules.length === 0) return null;
  const dp = effectiveDataPolicy(provider, ep);
  const group = zdrGroup(ep.model);
  const free = isFree(ep);
  for (const reason of ENDPOINT_REASONS) {
    for (const r of policy.rules) {
      let hit = false;
      switch (reason) {
        case 'allowed_providers':
          hit = r.allowedProviders !== null && !r.allowedProviders.some((x) => matchesProvider(x, ep, provider));
          break;
        case 'ignored_providers':
          hit = r.ignoredProviders.some((x) => matchesProvider(x, ep, provider));
          break;
        case 'data_policy:zdr':
          hit = !dp.zdr && r.zdrGroups.includes(group);
          break;
        case 'data_policy:training':
          hit = dp.training && (r.denyDataCollection || (free ? r.denyTrainingFree : r.denyTrainingPaid));
          break;
        case 'data_policy:retention':
          hit = dp.retainsPrompts && r.denyDataCollection;
          break;
      }
      if (hit) return { reason, source: r.source };
    }
  }
  return null;
}

export function endpointAllowed(policy: EffectivePolicy, ep: EndpointDef, provider: ProviderDef): boolean {
  return endpointVerdict(policy, ep, provider) === null;
}

export interface ModelAccess {
  model: ModelDef | undefined;
  /** Routable endpoints (provider known, credentials present) the policy allows. */
  endpoints: EndpointDef[];
  /** Set when the policy (not availability) leaves the model without endpoints: the decisive verdict. */
  blocked: Verdict | null;
  /** Every distinct policy reason met on this model. */
  reasons: PolicyReason[];
}

const sourceRank = (s: PolicySource) => (s.kind === 'organization' ? 0 : 1 + ['key', 'member', 'workspace'].indexOf(s.scope));
const reasonRank = (r: PolicyReason) => (r === 'allowed_models' || r === 'ignored_models' ? -1 : ENDPOINT_REASONS.indexOf(r));

/**
 * What a policy leaves of a model: the endpoints a request may route to. A model is blocked when the policy refuses
 * it, or when it has routable endpoints and the policy refuses every one (the earliest filter, then the first rule,
 * is the decisive verdict). A model without any routable endpoint is not blocked by policy: it is unavailable.
 */
export function modelAccess(policy: EffectivePolicy, catalog: RouteCatalog, hasCredentials: (p: ProviderDef) => boolean, modelId: string): ModelAccess {
  const model = catalog.models.get(modelId);
  if (!model) return { model, endpoints: [], blocked: null, reasons: [] };
  const mv = modelVerdict(policy, model);
  if (mv) return { model, endpoints: [], blocked: mv, reasons: [mv.reason] };
  const endpoints: EndpointDef[] = [];
  let decisive: Verdict | null = null;
  const reasons: PolicyReason[] = [];
  let routable = 0;
  for (const ep of catalog.endpointsByModel.get(modelId) ?? []) {
    const provider = catalog.providers.get(ep.provider);
    if (!provider || !hasCredentials(provider)) continue;
    routable++;
    const v = endpointVerdict(policy, ep, provider);
    if (!v) {
      endpoints.push(ep);
      continue;
    }
    if (!reasons.includes(v.reason)) reasons.push(v.reason);
    if (!decisive || reasonRank(v.reason) < reasonRank(decisive.reason) || (v.reason === decisive.reason && sourceRank(v.source) < sourceRank(decisive.source))) decisive = v;
  }
  return { model, endpoints, blocked: routable > 0 && endpoints.length === 0 ? decisive : null, reasons };
}
