/**
 * Stage 1, preferences: the request's `provider` object, the workspace default sort and the account policy resolved
 * once into `RoutePrefs` (lists without blanks, price ceilings as numbers, the sort and its partition, the soft
 * latency/throughput cutoffs), and the per-endpoint preference marks (`order` position, missed soft preferences).
 */
import type { EndpointDef, ProviderDef } from '../catalog-types.js';
import {
  normalizeCutoff,
  normalizeSort,
  parsePriceLimit,
  type PercentileCutoffs,
  type ProviderPreferences,
  type ProviderSortBy,
  type SortPartition,
} from '../provider-prefs.js';
import { matchesProvider } from './match.js';
import { DEFAULT_UNHEALTHY_WINDOW_MS, UNIVERSAL_PARAMS, type EndpointHealth, type PercentileStats, type RouteError, type RouteInput } from './types.js';

export type PriceCeilings = Record<'prompt' | 'completion' | 'request' | 'image', number | undefined>;

/** Everything the stages need from the request preferences and account policy, normalized. */
export interface RoutePrefs {
  maxPrice: PriceCeilings;
  hasMaxPrice: boolean;
  /** The sort in effect; 'exacto' behaves like the default strategy (null). */
  sortBy: Exclude<ProviderSortBy, 'exacto'> | null;
  partition: SortPartition;
  order: string[] | null;
  allowFallbacks: boolean;
  only: string[] | null;
  ignore: string[] | null;
  orgAllowed: string[] | null;
  orgIgnored: string[] | null;
  requireZdr: boolean;
  denyData: boolean;
  /** Lower-cased. */
  quantizations: string[] | null;
  requireParams: boolean;
  /** With require_parameters: the request parameters each endpoint must support. */
  checkedParams: string[];
  minThroughput: PercentileCutoffs | null;
  maxLatency: PercentileCutoffs | null;
  hasSoftPrefs: boolean;
  promptTokens: number | undefined;
  outputTokens: number | undefined;
  windowMs: number;
}

const NO_MAX_PRICE: PriceCeilings = Object.freeze({ prompt: undefined, completion: undefined, request: undefined, image: undefined });

/** Drops blank entries; an empty list is "no list". */
export function nonEmpty(list: string[] | null | undefined): string[] | null {
  if (!list) return null;
  const l = list.filter((x) => typeof x === 'string' && x.trim() !== '');
  return l.length > 0 ? l : null;
}

/** `provider.max_price` as USD numbers (per million tokens, per request, per image), or a 400 naming the bad field. */
export function priceCeilings(maxPrice: ProviderPreferences['max_price']): PriceCeilings | RouteError {
  if (!maxPrice) return NO_MAX_PRICE;
  const out: PriceCeilings = {
    prompt: parsePriceLimit(maxPrice.prompt),
    completion: parsePriceLimit(maxPrice.completion),
    request: parsePriceLimit(maxPrice.request),
    image: parsePriceLimit(maxPrice.image),
    // `audio` is accepted but cannot be enforced: the catalog Pricing has no audio price.
  };
  for (const [k, v] of Object.entries(out)) {
    if (v !== undefined && Number.isNaN(v)) {
      return { status: 400, code: 'invalid_request', message: `provider.max_price.${k} must be a non-negative number` };
    }
  }
  return out;
}

/** Resolves the preferences once per plan; a RouteError when `max_price` is invalid. */
export function resolvePreferences(input: RouteInput): RoutePrefs | RouteError {
  const prefs: ProviderPreferences = input.provider ?? {};
  const maxPrice = priceCeilings(prefs.max_price);
  if ('code' in maxPrice) return maxPrice;
  const sortCfg = normalizeSort(prefs.sort, input.defaultSort);
  // 'exacto' (quality-first by tool-calling success) needs quality data we do not have:
  // it is accepted and behaves like the default strategy.
  const sortBy = sortCfg && sortCfg.by !== 'exacto' ? sortCfg.by : null;
  const requireParams = prefs.require_parameters === true;
  const minThroughput = normalizeCutoff(prefs.preferred_min_throughput);
  const maxLatency = normalizeCutoff(prefs.preferred_max_latency);
  // `enforce_distillable_text` cannot be enforced: ModelDef has no distillation flag.
  return {
    maxPrice,
    hasMaxPrice: maxPrice !== NO_MAX_PRICE && Object.values(maxPrice).some((v) => v !== undefined),
    sortBy,
    partition: sortBy && sortCfg ? sortCfg.partition : 'model',
    order: nonEmpty(prefs.order),
    allowFallbacks: prefs.allow_fallbacks !== false,
    only: nonEmpty(prefs.only),
    ignore: nonEmpty(prefs.ignore),
    // Empty lists mean "no restriction" for allowlists.
    orgAllowed: nonEmpty(input.orgAllowedProviders ?? null),
    orgIgnored: nonEmpty(input.orgIgnoredProviders ?? null),
    requireZdr: prefs.zdr === true || input.requireZdr === true,
    denyData: prefs.data_collection === 'deny' || input.denyDataCollection === true,
    quantizations: nonEmpty(prefs.quantizations ?? null)?.map((q) => q.toLowerCase()) ?? null,
    requireParams,
    checkedParams: requireParams ? [...new Set(input.params)].filter((p) => !UNIVERSAL_PARAMS.has(p)) : [],
    minThroughput,
    maxLatency,
    hasSoftPrefs: minThroughput !== null || maxLatency !== null,
    promptTokens: input.estimatedPromptTokens,
    outputTokens: input.maxOutputTokens,
    windowMs: input.unhealthyWindowMs ?? DEFAULT_UNHEALTHY_WINDOW_MS,
  };
}

/** Any given percentile of `stats` violates the cutoff (`isMin` = minimum cutoff). */
export function violates(stats: PercentileStats | null | undefined, cutoff: PercentileCutoffs | null, scale: number, isMin: boolean): boolean {
  if (!stats || !cutoff) return false;
  for (const k of ['p50', 'p75', 'p90', 'p99'] as const) {
    const limit = cutoff[k];
    const v = stats[k];
    if (typeof limit !== 'number' || typeof v !== 'number') continue; // unknown stat: not penalised
    if (isMin ? v < limit * scale : v > limit * scale) return true;
  }
  return false;
}

/** The endpoint's measured throughput or latency misses `preferred_min_throughput` / `preferred_max_latency` (seconds). */
export function missesPreferences(health: EndpointHealth | undefined, prefs: RoutePrefs): boolean {
  return (
    prefs.hasSoftPrefs &&
    (violates(health?.throughput, prefs.minThroughput, 1, true) ||
      violates(health?.latencyMs, prefs.maxLatency, 1000 /* s → ms */, false))
  );
}

/** Index of the first `order` entry naming the endpoint; Infinity when not named (or no `order`). */
export function orderIndex(order: string[] | null, endpoint: EndpointDef, provider: ProviderDef): number {
  if (!order) return Infinity;
  const i = order.findIndex((o) => matchesProvider(o, endpoint, provider));
  return i >= 0 ? i : Infinity;
}
