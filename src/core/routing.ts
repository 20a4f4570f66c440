/**
 * Provider routing: turns the requested models, the catalog, provider preferences,
 * account policy and endpoint health into an ordered list of attempts.
 *
 * PURE logic: no I/O, time is `input.now`, randomness is `input.rng`.
 *
 * Pipeline (reference notes §7), per requested model:
 *  1. Unknown model ids are recorded as excluded (`model_not_found`); if none of the
 *     requested models exists the plan is a 404 `model_not_found`.
 *  2. Hard filters, evaluated per endpoint in this fixed order; an endpoint records the
 *     FIRST reason that excludes it (see `EXCLUSION_ORDER`):
 *       availability  unknown_provider, no_credentials
 *       policy        `endpointPolicy` (organization settings and guardrails; its own reason)
 *       who           allowed_providers (account allowlist = ceiling, intersected with `only`),
 *                     ignored_providers (account ignore list, unioned with `ignore`), only, ignore
 *       privacy       data_policy:zdr, data_policy:training, data_policy:retention
 *       capability    quantization, max_price, require_parameters, context_length
 *  3. Soft parameter filters (`tools`, `tool_choice`, `response_format`, `verbosity`):
 *     among the endpoints that survived step 2, if some support the parameter the
 *     others are dropped (`unsupported_parameter`); if none do, all are kept. Because
 *     they only look at survivors, soft filters never empty a model.
 *  4. `order` + `allow_fallbacks: false`: endpoints not named in `order` are dropped
 *     (`allow_fallbacks`).
 *  5. Tiering: healthy endpoints meeting the soft latency/throughput preferences, then
 *     healthy endpoints missing them, then unhealthy endpoints (failure within
 *     `unhealthyWindowMs`). Each tier is ordered by the strategy (see `orderTier`).
 *  6. Sticky endpoint (session affinity) moves to the front of its model's list.
 *  7. `allow_fallbacks: false` without `order`: only the first endpoint per model is kept.
 * Models are concatenated in request order (fallback models stay fallbacks) unless the
 * sort partition is `none` or soft preferences promote a fallback model.
 */
import type { DataPolicy, EndpointDef, ModelDef, ProviderDef } from './catalog-types.js';
import { blendedTokenPrice, isPriced, pricePerMillion } from './pricing.js';
import {
  normalizeCutoff,
  normalizeSort,
  parsePriceLimit,
  type PercentileCutoffs,
  type ProviderPreferences,
  type ProviderSortBy,
  type SortPartition,
} from './provider-prefs.js';

// ---------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------

export interface PercentileStats {
  p50: number;
  p75?: number;
  p90?: number;
  p99?: number;
}

export interface EndpointHealth {
  /** Epoch ms of the last failed attempt. */
  lastFailureAt?: number;
  /** Failures since the last success; an explicit 0 means it recovered. */
  consecutiveFailures?: number;
  /** Time to first token, milliseconds. */
  latencyMs?: PercentileStats | null;
  /** Tokens per second. */
  throughput?: PercentileStats | null;
}

export interface RouteCatalog {
  models: Map<string, ModelDef>;
  endpointsByModel: Map<string, EndpointDef[]>;
  providers: Map<string, ProviderDef>;
}

export interface RouteInput {
  /** Epoch ms. */
  now: number;
  /** Returns a number in [0, 1). */
  rng: () => number;
  /** Requested model ids in order: `model` first then `models[]` (catalog ids). */
  models: string[];
  catalog: RouteCatalog;
  /** Endpoints whose provider has no credentials are not routable (`no_credentials`). */
  hasCredentials: (provider: ProviderDef) => boolean;
  health: (endpoint: EndpointDef) => EndpointHealth | undefined;
  /** Names of the request parameters present (`temperature`, `tools`, ...). */
  params: string[];
  provider?: ProviderPreferences;
  /** Workspace `default_provider_sort`; the request `sort` wins. */
  defaultSort?: ProviderSortBy | null;
  /** Account ignored providers (unioned with `ignore`). */
  orgIgnoredProviders?: string[];
  /** Account allowlist (the ceiling; intersected with `only`). null/empty = no ceiling. */
  orgAllowedProviders?: string[] | null;
  /** Account/guardrail policy, ORed with the request. */
  requireZdr?: boolean;
  denyDataCollection?: boolean;
  /**
   * Organization and guardrail policy (src/core/policy.ts `endpointVerdict`): the reason an endpoint is refused, or
   * undefined. Evaluated right after availability, so `/models/user` and routing apply the very same function.
   */
  endpointPolicy?: (endpoint: EndpointDef, provider: ProviderDef) => ExclusionReason | undefined;
  estimatedPromptTokens?: number;
  maxOutputTokens?: number;
  /** Session affinity: put this endpoint first if still healthy and allowed. */
  stickyEndpoint?: { model: string; tag: string };
  /** Default 30_000. */
  unhealthyWindowMs?: number;
}

export interface Attempt {
  model: string;
  endpoint: EndpointDef;
  provider: ProviderDef;
}

export type ExclusionReason =
  | 'model_not_found'
  | 'unknown_provider'
  | 'no_credentials'
  | 'allowed_providers'
  | 'ignored_providers'
  | 'only'
  | 'ignore'
  | 'data_policy:zdr'
  | 'data_policy:training'
  | 'data_policy:retention'
  | 'quantization'
  | 'max_price'
  | 'require_parameters'
  | 'context_length'
  | 'unsupported_parameter'
  | 'allow_fallbacks';

export interface ConsideredEndpoint {
  model: string;
  /** Provider slug ('' for an unknown model). */
  provider: string;
  /** Endpoint tag ('' for an unknown model). */
  tag: string;
  excluded?: ExclusionReason;
  /** Set on routable endpoints that failed within the unhealthy window (tried last). */
  unhealthy?: true;
}

export type RouteErrorCode =
  | 'invalid_request'
  | 'model_not_found'
  | 'no_endpoints'
  | 'constraint_filtered'
  | 'privacy_restricted'
  | 'all_unhealthy';

export interface RouteError {
  status: 400 | 404 | 503;
  code: RouteErrorCode;
  message: string;
  /** Distinct exclusion reasons, in first-seen order. */
  excluded_by?: string[];
  /** For `all_unhealthy`: ms until the first endpoint leaves the unhealthy window (Retry-After hint). */
  retry_after_ms?: number;
}

export interface RoutePlan {
  /** Try in this order; empty means `error` is set. */
  attempts: Attempt[];
  /** 'direct' | 'fallback' | 'order' | 'sticky' | 'sort:price' | 'sort:throughput' | 'sort:latency'. */
  strategy: string;
  /** Every endpoint of every requested model, with its exclusion reason. */
  considered: ConsideredEndpoint[];
  error?: RouteError;
}

// ---------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------

export const DEFAULT_UNHEALTHY_WINDOW_MS = 30_000;

/**
 * Default strategy: endpoints priced within this factor of the cheapest one form the
 * "cheap tier"; the first attempt is drawn from it with weight 1/price².
 */
export const CHEAP_TIER_FACTOR = 2;

/**
 * Request fields every endpoint accepts (handled by the gateway or the adapter), so
 * `require_parameters` never checks them. Everything else (sampling and feature
 * parameters) must appear in the endpoint's `supported_parameters`.
 */
export const UNIVERSAL_PARAMS: ReadonlySet<string> = new Set([
  'model', 'models', 'messages', 'prompt', 'input', 'stream', 'stream_options', 'provider', 'metadata',
  'user', 'session_id', 'preset', 'usage', 'transforms', 'trace', 'debug', 'plugins', 'route',
  'max_tokens', 'max_completion_tokens',
]);

/** Parameters that act as soft filters even without `require_parameters` (reference §7). */
export const SOFT_FILTER_PARAMS: readonly string[] = ['tools', 'tool_choice', 'response_format', 'verbosity'];

/** A request parameter is also satisfied by these supported_parameters entries. */
const PARAM_ALIASES: Record<string, readonly string[]> = {
  reasoning: ['reasoning', 'include_reasoning', 'reasoning_effort'],
  reasoning_effort: ['reasoning_effort', 'reasoning'],
  include_reasoning: ['include_reasoning', 'reasoning'],
};

/** Evaluation order of the hard filters; also used to find which filter emptied a model. */
const EXCLUSION_ORDER: readonly ExclusionReason[] = [
  'unknown_provider',
  'no_credentials',
  'allowed_providers',
  'ignored_providers',
  'only',
  'ignore',
  'data_policy:zdr',
  'data_policy:training',
  'data_policy:retention',
  'quantization',
  'max_price',
  'require_parameters',
  'context_length',
  'unsupported_parameter',
  'allow_fallbacks',
];

const PRIVACY_REASONS: ReadonlySet<ExclusionReason> = new Set([
  'data_policy:zdr',
  'data_policy:training',
  'data_policy:retention',
]);
const AVAILABILITY_REASONS: ReadonlySet<ExclusionReason> = new Set(['unknown_provider', 'no_credentials']);

// ---------------------------------------------------------------------------
// Small exported helpers
// ---------------------------------------------------------------------------

/**
 * Provider-list matching (`order`, `only`, `ignore`, account lists), case-insensitive:
 * a base slug (`deepinfra`) matches every tag of that provider, a full tag
 * (`deepinfra/turbo`) matches that endpoint only. The provider's display name is also
 * accepted (users often write `Together` instead of `together`).
 */
export function matchesProvider(entry: string, endpoint: EndpointDef, provider?: ProviderDef): boolean {
  const e = entry.trim().toLowerCase();
  if (!e) return false;
  const tag = endpoint.tag.toLowerCase();
  return (
    e === endpoint.provider.toLowerCase() ||
    e === tag ||
    e === tag.split('/')[0] ||
    (provider !== undefined && e === provider.name.toLowerCase())
  );
}

function matchesAny(list: readonly string[], endpoint: EndpointDef, provider?: ProviderDef): boolean {
  return list.some((x) => matchesProvider(x, endpoint, provider));
}

/** Provider data policy overridden field by field by the endpoint's. */
export function effectiveDataPolicy(provider: ProviderDef, endpoint: EndpointDef): DataPolicy {
  const o = endpoint.dataPolicy ?? {};
  const p = provider.dataPolicy;
  return {
    training: o.training ?? p.training,
    retainsPrompts: o.retainsPrompts ?? p.retainsPrompts,
    zdr: o.zdr ?? p.zdr,
  };
}

/**
 * Unhealthy = failed within the window. An explicit `consecutiveFailures: 0` means a
 * success was recorded after that failure, so the endpoint counts as healthy again.
 */
export function isUnhealthy(h: EndpointHealth | undefined, now: number, windowMs: number): boolean {
  if (!h || typeof h.lastFailureAt !== 'number') return false;
  if (h.consecutiveFailures === 0) return false;
  return now - h.lastFailureAt < windowMs;
}

/** Whether an endpoint honours a request parameter (with a few aliases). */
export function supportsParam(endpoint: EndpointDef, param: string): boolean {
  const names = PARAM_ALIASES[param] ?? [param];
  return names.some((n) => endpoint.supported_parameters.includes(n));
}

// ---------------------------------------------------------------------------
// Planner
// ---------------------------------------------------------------------------

interface Cand {
  model: string;
  modelIdx: number;
  catIdx: number;
  endpoint: EndpointDef;
  provider: ProviderDef;
  row: ConsideredEndpoint;
  /** Blended prompt+completion USD/token; null = unknown. */
  price: number | null;
  health: EndpointHealth | undefined;
  unhealthy: boolean;
  missesPrefs: boolean;
  /** Index of the first matching `order` entry; Infinity when not named. */
  orderIdx: number;
}

interface ModelState {
  model: string;
  idx: number;
  cands: Cand[];
  /** Reasons of excluded endpoints, for error classification. */
  reasons: ExclusionReason[];
}

function err(
  status: RouteError['status'],
  code: RouteErrorCode,
  message: string,
  considered: ConsideredEndpoint[],
  extra?: Partial<RouteError>,
): RoutePlan {
  return { attempts: [], strategy: 'none', considered, error: { status, code, message, ...extra } };
}

function distinctReasons(considered: ConsideredEndpoint[]): string[] {
  const out: string[] = [];
  for (const c of considered) if (c.excluded && !out.includes(c.excluded)) out.push(c.excluded);
  return out;
}

function nonEmpty(list: string[] | null | undefined): string[] | null {
  if (!list) return null;
  const l = list.filter((x) => typeof x === 'string' && x.trim() !== '');
  return l.length > 0 ? l : null;
}

/** Any given percentile of `stats` violates the cutoff (`below` = minimum cutoff). */
function violates(stats: PercentileStats | null | undefined, cutoff: PercentileCutoffs | null, scale: number, isMin: boolean): boolean {
  if (!stats || !cutoff) return false;
  for (const k of ['p50', 'p75', 'p90', 'p99'] as const) {
    const limit = cutoff[k];
    const v = stats[k];
    if (typeof limit !== 'number' || typeof v !== 'number') continue; // unknown stat: not penalised
    if (isMin ? v < limit * scale : v > limit * scale) return true;
  }
  return false;
}

const NO_MAX_PRICE: Record<'prompt' | 'completion' | 'request' | 'image', number | undefined> = Object.freeze({ prompt: undefined, completion: undefined, request: undefined, image: undefined });

export function planRoute(input: RouteInput): RoutePlan {
  const prefs: ProviderPreferences = input.provider ?? {};
  const now = input.now;
  const windowMs = input.unhealthyWindowMs ?? DEFAULT_UNHEALTHY_WINDOW_MS;
  const considered: ConsideredEndpoint[] = [];

  // --- preferences ---------------------------------------------------------
  const maxPrice = prefs.max_price
    ? {
        prompt: parsePriceLimit(prefs.max_price.prompt),
        completion: parsePriceLimit(prefs.max_price.completion),
        request: parsePriceLimit(prefs.max_price.request),
        image: parsePriceLimit(prefs.max_price.image),
        // `audio` is accepted but cannot be enforced: the catalog Pricing has no audio price.
      }
    : NO_MAX_PRICE;
  if (maxPrice !== NO_MAX_PRICE) {
    for (const [k, v] of Object.entries(maxPrice)) {
      if (v !== undefined && Number.isNaN(v)) {
        return err(400, 'invalid_request', `provider.max_price.${k} must be a non-negative number`, considered);
      }
    }
  }
  const hasMaxPrice = maxPrice !== NO_MAX_PRICE && Object.values(maxPrice).some((v) => v !== undefined);

  const sortCfg = normalizeSort(prefs.sort, input.defaultSort);
  // 'exacto' (quality-first by tool-calling success) needs quality data we do not have:
  // it is accepted and behaves like the default strategy.
  const sortBy: Exclude<ProviderSortBy, 'exacto'> | null =
    sortCfg && sortCfg.by !== 'exacto' ? sortCfg.by : null;
  const partition: SortPartition = sortBy && sortCfg ? sortCfg.partition : 'model';

  const order = nonEmpty(prefs.order);
  const allowFallbacks = prefs.allow_fallbacks !== false;
  const only = nonEmpty(prefs.only);
  const ignore = nonEmpty(prefs.ignore);
  // Empty lists mean "no restriction" for allowlists.
  const orgAllowed = nonEmpty(input.orgAllowedProviders ?? null);
  const orgIgnored = nonEmpty(input.orgIgnoredProviders ?? null);
  const requireZdr = prefs.zdr === true || input.requireZdr === true;
  const denyData = prefs.data_collection === 'deny' || input.denyDataCollection === true;
  const quantizations = nonEmpty(prefs.quantizations ?? null)?.map((q) => q.toLowerCase()) ?? null;
  const requireParams = prefs.require_parameters === true;
  const checkedParams = requireParams ? [...new Set(input.params)].filter((p) => !UNIVERSAL_PARAMS.has(p)) : [];
  const minTp = normalizeCutoff(prefs.preferred_min_throughput);
  const maxLat = normalizeCutoff(prefs.preferred_max_latency);
  const hasSoftPrefs = minTp !== null || maxLat !== null;
  const promptTok = input.estimatedPromptTokens;
  const outTok = input.maxOutputTokens;
  // `enforce_distillable_text` cannot be enforced: ModelDef has no distillation flag.

  // --- models ----------------------------------------------------------------
  const requested = [...new Set(input.models)];
  if (requested.length === 0) return err(400, 'invalid_request', 'No model specified', considered);
  const missing: string[] = [];
  const states: ModelState[] = [];
  for (const model of requested) {
    if (!input.catalog.models.has(model)) {
      considered.push({ model, provider: '', tag: '', excluded: 'model_not_found' });
      missing.push(model);
      continue;
    }
    states.push({ model, idx: states.length, cands: [], reasons: [] });
  }
  if (states.length === 0) {
    const msg =
      missing.length === 1 ? `${missing[0]} is not a valid model ID` : `None of the requested models exist: ${missing.join(', ')}`;
    return err(404, 'model_not_found', msg, considered, { excluded_by: ['model_not_found'] });
  }

  const missingParams = new Set<string>();

  // --- hard filters ------------------------------------------------------------
  const hardReason = (ep: EndpointDef, provider: ProviderDef | undefined): ExclusionReason | undefined => {
    if (!provider) return 'unknown_provider';
    if (!input.hasCredentials(provider)) return 'no_credentials';
    const policyReason = input.endpointPolicy?.(ep, provider);
    if (policyReason) return policyReason;
    if (orgAllowed && !matchesAny(orgAllowed, ep, provider)) return 'allowed_providers';
    if (orgIgnored && matchesAny(orgIgnored, ep, provider)) return 'ignored_providers';
    if (only && !matchesAny(only, ep, provider)) return 'only';
    if (ignore && matchesAny(ignore, ep, provider)) return 'ignore';
    const pol = effectiveDataPolicy(provider, ep);
    if (requireZdr && !pol.zdr) return 'data_policy:zdr';
    if (denyData && pol.training) return 'data_policy:training';
    if (denyData && pol.retainsPrompts) return 'data_policy:retention';
    if (quantizations && !quantizations.includes((ep.quantization ?? 'unknown').toLowerCase())) return 'quantization';
    if (hasMaxPrice) {
      // Unknown pricing cannot be proven to fit a ceiling: excluded.
      if (!ep.pricing || !isPriced(ep.pricing)) return 'max_price';
      const pr = ep.pricing;
      if (maxPrice.prompt !== undefined && pricePerMillion(pr.prompt) > maxPrice.prompt) return 'max_price';
      if (maxPrice.completion !== undefined && pricePerMillion(pr.completion) > maxPrice.completion) return 'max_price';
      if (maxPrice.request !== undefined && Number(pr.request || 0) > maxPrice.request) return 'max_price';
      if (maxPrice.image !== undefined && Number(pr.image || 0) > maxPrice.image) return 'max_price';
    }
    if (requireParams) {
      const miss = checkedParams.filter((p) => !supportsParam(ep, p));
      if (miss.length > 0) {
        for (const m of miss) missingParams.add(m);
        return 'require_parameters';
      }
    }
    // Context: the prompt must fit max_prompt_tokens/context_length, the output must fit
    // max_completion_tokens, and prompt + output must fit context_length.
    const ctx = ep.context_length > 0 ? ep.context_length : Infinity;
    if (promptTok !== undefined) {
      const promptLimit = Math.min(ctx, ep.max_prompt_tokens && ep.max_prompt_tokens > 0 ? ep.max_prompt_tokens : Infinity);
      if (promptTok > promptLimit) return 'context_length';
    }
    if (outTok !== undefined) {
      if (ep.max_completion_tokens && ep.max_completion_tokens > 0 && outTok > ep.max_completion_tokens) return 'context_length';
      if (promptTok !== undefined && promptTok + outTok > ctx) return 'context_length';
    }
    return undefined;
  };

  const exclude = (st: ModelState, c: Cand, reason: ExclusionReason): void => {
    c.row.excluded = reason;
    st.reasons.push(reason);
  };

  for (const st of states) {
    const eps = input.catalog.endpointsByModel.get(st.model) ?? [];
    eps.forEach((ep, catIdx) => {
      const provider = input.catalog.providers.get(ep.provider);
      const row: ConsideredEndpoint = { model: st.model, provider: ep.provider, tag: ep.tag };
      considered.push(row);
      const reason = hardReason(ep, provider);
      if (reason || !provider) {
        row.excluded = reason ?? 'unknown_provider';
        st.reasons.push(row.excluded);
        return;
      }
      const health = input.health(ep);
      const unhealthy = isUnhealthy(health, now, windowMs);
      const missesPrefs =
        hasSoftPrefs &&
        (violates(health?.throughput, minTp, 1, true) || violates(health?.latencyMs, maxLat, 1000 /* s → ms */, false));
      let orderIdx = Infinity;
      if (order) {
        const i = order.findIndex((o) => matchesProvider(o, ep, provider));
        if (i >= 0) orderIdx = i;
      }
      st.cands.push({
        model: st.model,
        modelIdx: st.idx,
        catIdx,
        endpoint: ep,
        provider,
        row,
        price: blendedTokenPrice(ep.pricing),
        health,
        unhealthy,
        missesPrefs,
        orderIdx,
      });
    });

    // Soft parameter filters (only when require_parameters did not already enforce them).
    if (!requireParams) {
      for (const p of SOFT_FILTER_PARAMS) {
        if (!input.params.includes(p)) continue;
        const supporters = st.cands.filter((c) => supportsParam(c.endpoint, p));
        if (supporters.length === 0 || supporters.length === st.cands.length) continue;
        for (const c of st.cands) if (!supporters.includes(c)) exclude(st, c, 'unsupported_parameter');
        st.cands = supporters;
      }
    }

    // `order` with allow_fallbacks=false: only the named providers.
    if (order && !allowFallbacks) {
      for (const c of st.cands) if (c.orderIdx === Infinity) exclude(st, c, 'allow_fallbacks');
      st.cands = st.cands.filter((c) => c.orderIdx !== Infinity);
    }

    for (const c of st.cands) if (c.unhealthy) c.row.unhealthy = true;
  }

  // --- ordering ------------------------------------------------------------------
  const sortKey = (c: Cand): number | null => {
    switch (sortBy) {
      case 'price':
        return c.price;
      case 'throughput': {
        const v = c.health?.throughput?.p50;
        return typeof v === 'number' ? -v : null; // descending
      }
      case 'latency': {
        const v = c.health?.latencyMs?.p50;
        return typeof v === 'number' ? v : null;
      }
      default:
        return c.price; // default strategy: fallbacks ordered by price
    }
  };
  const nullsLast = (a: number | null, b: number | null): number => {
    if (a === b) return 0;
    if (a === null) return 1;
    if (b === null) return -1;
    return a - b;
  };
  const cmpOrder = (a: Cand, b: Cand): number => {
    // (Infinity - Infinity is NaN, so compare explicitly.)
    if (a.orderIdx === b.orderIdx) return 0;
    return a.orderIdx < b.orderIdx ? -1 : 1;
  };
  // Deterministic comparator: `order` position, then the sort key (unknown last),
  // then price, then model order, then catalog order.
  const fullCmp = (a: Cand, b: Cand): number =>
    cmpOrder(a, b) ||
    nullsLast(sortKey(a), sortKey(b)) ||
    nullsLast(a.price, b.price) ||
    a.modelIdx - b.modelIdx ||
    a.catIdx - b.catIdx;

  const rng = input.rng;
  // Load balancing happens only with no `order` and no sort (both disable it).
  const loadBalance = !order && !sortBy;

  /**
   * Orders one tier. Default strategy (load balancing): the first endpoint is drawn at
   * random with weight 1/price² among the cheap tier (priced endpoints costing at most
   * CHEAP_TIER_FACTOR × the cheapest; if the cheapest is free, the free ones with equal
   * weights); the rest follow by price ascending, unknown prices last.
   */
  const orderTier = (tier: Cand[]): Cand[] => {
    if (tier.length < 2) return tier;
    const sorted = [...tier].sort(fullCmp);
    if (!loadBalance) return sorted;
    const priced = sorted.filter((c) => c.price !== null);
    if (priced.length < 2) return sorted;
    const cheapest = priced[0].price as number;
    const cheap =
      cheapest === 0
        ? priced.filter((c) => c.price === 0)
        : priced.filter((c) => (c.price as number) <= CHEAP_TIER_FACTOR * cheapest);
    if (cheap.length < 2) return sorted;
    // (cheapest/p)² is proportional to 1/p² and avoids huge numbers.
    const weights = cheap.map((c) => (cheapest === 0 ? 1 : (cheapest / (c.price as number)) ** 2));
    const total = weights.reduce((s, w) => s + w, 0);
    let r = Math.min(Math.max(rng(), 0), 1 - Number.EPSILON) * total;
    let pick = cheap[cheap.length - 1];
    for (let i = 0; i < cheap.length; i++) {
      r -= weights[i];
      if (r < 0) {
        pick = cheap[i];
        break;
      }
    }
    return [pick, ...sorted.filter((c) => c !== pick)];
  };

  /**
   * Unhealthy endpoints (tried last): `order` position first, then fewest consecutive
   * failures, then the oldest failure (most likely recovered), then the usual order.
   */
  const orderUnhealthy = (tier: Cand[]): Cand[] =>
    tier.length < 2
      ? tier
      : [...tier].sort(
      (a, b) =>
        cmpOrder(a, b) ||
        (a.health?.consecutiveFailures ?? 1) - (b.health?.consecutiveFailures ?? 1) ||
        (a.health?.lastFailureAt ?? 0) - (b.health?.lastFailureAt ?? 0) ||
        fullCmp(a, b),
    );

  const NONE: Cand[] = [];
  const tiersOf = (cands: Cand[]): { pref: Cand[]; miss: Cand[]; bad: Cand[] } =>
    cands.every((c) => !c.unhealthy && !c.missesPrefs)
      ? { pref: cands, miss: NONE, bad: NONE }
      : {
          pref: cands.filter((c) => !c.unhealthy && !c.missesPrefs),
          miss: cands.filter((c) => !c.unhealthy && c.missesPrefs),
          bad: cands.filter((c) => c.unhealthy),
        };
  /** The three tiers in order (without copying when only the first has endpoints). */
  const ordered = (t: { pref: Cand[]; miss: Cand[]; bad: Cand[] }): Cand[] =>
    t.miss.length === 0 && t.bad.length === 0 ? [...orderTier(t.pref)] : [...orderTier(t.pref), ...orderTier(t.miss), ...orderUnhealthy(t.bad)];

  let blocks: Cand[][];
  if (partition === 'none') {
    // Sort all endpoints of all models together.
    blocks = [ordered(tiersOf(states.flatMap((s) => s.cands)))];
  } else {
    const withPref: Cand[][] = [];
    const withoutPref: Cand[][] = [];
    for (const st of states) {
      if (st.cands.length === 0) continue;
      const t = tiersOf(st.cands);
      const block = ordered(t);
      // Soft preferences can promote a fallback model: models with no healthy endpoint
      // meeting them move after the models that have one (stable otherwise).
      if (hasSoftPrefs && t.pref.length === 0) withoutPref.push(block);
      else withPref.push(block);
    }
    blocks = [...withPref, ...withoutPref];
  }

  // Sticky endpoint: front of its model's block (front of everything with partition
  // 'none' or when that model comes first), if it survived filtering and is healthy.
  let stickyCand: Cand | undefined;
  if (input.stickyEndpoint) {
    const { model, tag } = input.stickyEndpoint;
    for (const block of blocks) {
      const i = block.findIndex((c) => c.model === model && c.endpoint.tag === tag && !c.unhealthy);
      if (i >= 0) {
        stickyCand = block[i];
        block.splice(i, 1);
        block.unshift(stickyCand);
        break;
      }
    }
  }

  let list = blocks.flat();

  // allow_fallbacks=false without `order`: only the chosen endpoint of each model.
  if (!allowFallbacks && !order) {
    const seen = new Set<string>();
    const kept: Cand[] = [];
    for (const c of list) {
      if (seen.has(c.model)) {
        const st = states[c.modelIdx];
        exclude(st, c, 'allow_fallbacks');
        delete c.row.unhealthy;
        continue;
      }
      seen.add(c.model);
      kept.push(c);
    }
    list = kept;
  }

  // --- errors ----------------------------------------------------------------------
  if (list.length === 0) return noEndpointsError(states, considered, { order, missingParams, promptTok, outTok, quantizations });

  // All remaining endpoints failed recently: 503 rather than hammering them. (If at
  // least one is healthy, unhealthy ones are simply tried last.)
  if (list.every((c) => c.unhealthy)) {
    const retry = Math.max(0, Math.min(...list.map((c) => (c.health?.lastFailureAt ?? now) + windowMs - now)));
    return err(
      503,
      'all_unhealthy',
      `All endpoints for ${states.map((s) => s.model).join(', ')} failed in the last ${Math.round(windowMs / 1000)}s; try again shortly`,
      considered,
      { excluded_by: distinctReasons(considered), retry_after_ms: retry },
    );
  }

  // --- strategy label ----------------------------------------------------------------
  let strategy: string;
  if (stickyCand && list[0] === stickyCand) strategy = 'sticky';
  else if (order) strategy = 'order';
  else if (sortBy) strategy = `sort:${sortBy}`;
  else if (list[0].model !== requested[0]) strategy = 'fallback';
  else strategy = 'direct';

  return {
    attempts: list.map((c) => ({ model: c.model, endpoint: c.endpoint, provider: c.provider })),
    strategy,
    considered,
  };
}

function category(reason: ExclusionReason | null): 'no_endpoints' | 'privacy_restricted' | 'constraint_filtered' {
  if (reason === null || AVAILABILITY_REASONS.has(reason)) return 'no_endpoints';
  if (PRIVACY_REASONS.has(reason)) return 'privacy_restricted';
  return 'constraint_filtered';
}

/**
 * Error when no attempt is left. For each model, the filter that removed its LAST
 * endpoints is the latest one (in EXCLUSION_ORDER) among its endpoints' reasons; it is
 * classified as no_endpoints (no endpoints / no credentials), privacy_restricted
 * (zdr / data collection) or constraint_filtered (everything else). Across models the
 * code is privacy_restricted if any model was emptied by privacy, else
 * constraint_filtered if any was emptied by a constraint, else no_endpoints.
 */
function noEndpointsError(
  states: ModelState[],
  considered: ConsideredEndpoint[],
  ctx: {
    order: string[] | null;
    missingParams: Set<string>;
    promptTok?: number;
    outTok?: number;
    quantizations: string[] | null;
  },
): RoutePlan {
  const emptiedBy = states.map((st) => {
    let best: ExclusionReason | null = null;
    for (const r of st.reasons) if (best === null || EXCLUSION_ORDER.indexOf(r) > EXCLUSION_ORDER.indexOf(best)) best = r;
    return best;
  });
  const cats = emptiedBy.map(category);
  const code: RouteErrorCode = cats.includes('privacy_restricted')
    ? 'privacy_restricted'
    : cats.includes('constraint_filtered')
      ? 'constraint_filtered'
      : 'no_endpoints';
  const reason = emptiedBy[cats.indexOf(code)] ?? null;
  const names = states.map((s) => s.model).join(', ');
  let message: string;
  switch (reason) {
    case null:
      message = `No endpoints found for ${names}.`;
      break;
    case 'unknown_provider':
    case 'no_credentials': {
      const provs = [
        ...new Set(considered.filter((c) => c.excluded === 'no_credentials').map((c) => c.provider)),
      ];
      message = `No endpoints found for ${names}.` + (provs.length ? ` No credentials are configured for: ${provs.join(', ')}.` : '');
      break;
    }
    case 'data_policy:zdr':
      message = `No endpoints found for ${names} that match your data policy (zero data retention required)`;
      break;
    case 'data_policy:training':
    case 'data_policy:retention':
      message = `No endpoints found for ${names} that match your data policy (data collection denied)`;
      break;
    case 'require_parameters':
      message = `No endpoints found that support the requested parameters: ${[...ctx.missingParams].join(', ')}`;
      break;
    case 'max_price':
      message = `No endpoints found for ${names} within the requested max_price`;
      break;
    case 'context_length':
      message =
        `No endpoints found for ${names} that can fit the request` +
        (ctx.promptTok !== undefined ? ` (${ctx.promptTok} prompt tokens` + (ctx.outTok !== undefined ? ` + ${ctx.outTok} output tokens)` : ')') : '');
      break;
    case 'quantization':
      message = `No endpoints found for ${names} with the requested quantizations: ${(ctx.quantizations ?? []).join(', ')}`;
      break;
    case 'allow_fallbacks':
      message = ctx.order
        ? `No endpoints found for ${names} among provider.order (${ctx.order.join(', ')}) and allow_fallbacks is false`
        : `No endpoints found for ${names} (allow_fallbacks is false)`;
      break;
    default:
      message = `No endpoints found for ${names} that match your provider preferences (${reason})`;
  }
  return {
    attempts: [],
    strategy: 'none',
    considered,
    error: { status: 404, code, message, excluded_by: distinctReasons(considered) },
  };
}
