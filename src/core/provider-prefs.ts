/**
 * Request-level provider routing preferences (`provider` object on chat, responses,
 * messages, embeddings, ... requests), mirroring the reference `ProviderPreferences`
 * schema, plus small pure helpers to normalise them.
 *
 * Pure logic: no I/O.
 */

/** Provider sort strategies (reference schema `ProviderSort`). */
export type ProviderSortBy = 'price' | 'throughput' | 'latency' | 'exacto';

/**
 * How a sort is applied across `models[]`:
 * - `model` (default): sort within each model; fallback models stay fallbacks.
 * - `none`: sort the endpoints of all requested models together.
 */
export type SortPartition = 'model' | 'none';

/** Reference schema `ProviderSortConfig`. */
export interface ProviderSortConfig {
  by?: ProviderSortBy | null;
  partition?: SortPartition | null;
}

/** Quantization levels known to the reference schema (others are accepted as plain strings). */
export type Quantization =
  | 'int4'
  | 'int8'
  | 'fp4'
  | 'mxfp4'
  | 'nvfp4'
  | 'fp6'
  | 'fp8'
  | 'mxfp8'
  | 'fp16'
  | 'bf16'
  | 'fp32'
  | 'unknown';

/** Percentile cutoffs; every cutoff given must hold for an endpoint to be preferred. */
export interface PercentileCutoffs {
  p50?: number | null;
  p75?: number | null;
  p90?: number | null;
  p99?: number | null;
}

/** A number (applies to p50) or percentile cutoffs. */
export type PreferredCutoff = number | PercentileCutoffs | null;

/** A price limit: the wire schema says string, clients also send numbers. */
export type PriceLimit = number | string;

/**
 * Maximum price the caller accepts. `prompt`/`completion` are USD per MILLION tokens;
 * `request`, `image`, `audio` are USD per unit.
 */
export interface MaxPrice {
  prompt?: PriceLimit | null;
  completion?: PriceLimit | null;
  request?: PriceLimit | null;
  image?: PriceLimit | null;
  audio?: PriceLimit | null;
}

/** Reference schema `ProviderPreferences`. */
export interface ProviderPreferences {
  /** Providers (slugs or tags) tried first, in this order. Disables load balancing. */
  order?: string[] | null;
  /** Allowlist of providers (slugs or tags); intersected with the account allowlist. */
  only?: string[] | null;
  /** Denylist of providers (slugs or tags); unioned with the account's ignored providers. */
  ignore?: string[] | null;
  /** Default true. false = only the primary / `order` providers are used. */
  allow_fallbacks?: boolean | null;
  /** Route only to endpoints that support every parameter sent. Default false. */
  require_parameters?: boolean | null;
  /** `deny` = only providers that neither train on nor retain prompts. Default `allow`. */
  data_collection?: 'allow' | 'deny' | null;
  /** Only zero-data-retention endpoints; ORed with account/guardrail policy. */
  zdr?: boolean | null;
  /** Only models whose author allows distillation. */
  enforce_distillable_text?: boolean | null;
  /** Allowed quantization levels. */
  quantizations?: Array<Quantization | string> | null;
  /** Sort strategy (disables load balancing). */
  sort?: ProviderSortBy | ProviderSortConfig | null;
  /** Hard price ceiling. */
  max_price?: MaxPrice | null;
  /** Soft: minimum throughput in tokens/second. */
  preferred_min_throughput?: PreferredCutoff;
  /** Soft: maximum latency (time to first token) in SECONDS. */
  preferred_max_latency?: PreferredCutoff;
}

/** Deprecated top-level `route` request field. */
export type DeprecatedRoute = 'fallback' | 'sort';

export const PROVIDER_SORTS: readonly ProviderSortBy[] = ['price', 'throughput', 'latency', 'exacto'];

/**
 * Maps the deprecated top-level `route` to a sort partition:
 * `fallback` → `model`, `sort` → `none`.
 */
export function routeToPartition(route: DeprecatedRoute | null | undefined): SortPartition | undefined {
  if (route === 'fallback') return 'model';
  if (route === 'sort') return 'none';
  return undefined;
}

/**
 * Folds the deprecated `route` field into the preferences. An explicit
 * `sort.partition` wins over `route`. Returns a new object (input untouched).
 */
export function applyDeprecatedRoute(
  prefs: ProviderPreferences | null | undefined,
  route: DeprecatedRoute | null | undefined,
): ProviderPreferences | undefined {
  const partition = routeToPartition(route);
  if (!partition) return prefs ?? undefined;
  const base: ProviderPreferences = { ...(prefs ?? {}) };
  const sort = base.sort;
  if (sort == null) {
    base.sort = { by: null, partition };
  } else if (typeof sort === 'string') {
    base.sort = { by: sort, partition };
  } else if (sort.partition == null) {
    base.sort = { ...sort, partition };
  }
  return base;
}

/** Normalised sort: `by` is set, partition defaults to `model`. */
export interface NormalizedSort {
  by: ProviderSortBy;
  partition: SortPartition;
}

/**
 * Resolves the effective sort: the request `sort` wins; if it has no `by`, the
 * workspace `defaultSort` supplies it (a request partition still applies).
 * Returns null when no sort is in effect.
 */
export function normalizeSort(
  sort: ProviderPreferences['sort'] | undefined,
  defaultSort?: ProviderSortBy | null,
): NormalizedSort | null {
  let by: ProviderSortBy | null | undefined;
  let partition: SortPartition | null | undefined;
  if (typeof sort === 'string') {
    by = sort;
  } else if (sort && typeof sort === 'object') {
    by = sort.by;
    partition = sort.partition;
  }
  by = by ?? defaultSort ?? null;
  if (!by) return null;
  return { by, partition: partition ?? 'model' };
}

/**
 * Parses a price limit (number or numeric string). Returns undefined when absent,
 * NaN when present but not a finite, non-negative number.
 */
export function parsePriceLimit(v: PriceLimit | null | undefined): number | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? v : NaN;
  if (typeof v !== 'string') return NaN;
  const s = v.trim();
  if (s === '' || !/^[+]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return NaN;
  const n = Number(s);
  return Number.isFinite(n) && n >= 0 ? n : NaN;
}

/** Normalises a soft cutoff to percentile form (a bare number applies to p50). */
export function normalizeCutoff(c: PreferredCutoff | undefined): PercentileCutoffs | null {
  if (c === null || c === undefined) return null;
  if (typeof c === 'number') return { p50: c };
  const out: PercentileCutoffs = {};
  let any = false;
  for (const k of ['p50', 'p75', 'p90', 'p99'] as const) {
    const v = c[k];
    if (typeof v === 'number') {
      out[k] = v;
      any = true;
    }
  }
  return any ? out : null;
}

/**
 * Light runtime validation of a `provider` object arriving as JSON.
 * Returns human-readable problems (empty = valid). Unknown keys are rejected
 * because the reference schema has `additionalProperties: false`.
 */
export function validateProviderPreferences(p: unknown): string[] {
  const errs: string[] = [];
  if (p === null || p === undefined) return errs;
  if (typeof p !== 'object' || Array.isArray(p)) return ['provider must be an object'];
  const o = p as Record<string, unknown>;
  const known = new Set([
    'order', 'only', 'ignore', 'allow_fallbacks', 'require_parameters', 'data_collection', 'zdr',
    'enforce_distillable_text', 'quantizations', 'sort', 'max_price', 'preferred_min_throughput',
    'preferred_max_latency',
  ]);
  for (const k of Object.keys(o)) if (!known.has(k)) errs.push(`provider.${k} is not a recognized field`);
  for (const k of ['order', 'only', 'ignore', 'quantizations']) {
    const v = o[k];
    if (v == null) continue;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) errs.push(`provider.${k} must be an array of strings`);
  }
  for (const k of ['allow_fallbacks', 'require_parameters', 'zdr', 'enforce_distillable_text']) {
    const v = o[k];
    if (v != null && typeof v !== 'boolean') errs.push(`provider.${k} must be a boolean`);
  }
  const dc = o.data_collection;
  if (dc != null && dc !== 'allow' && dc !== 'deny') errs.push(`provider.data_collection must be 'allow' or 'deny'`);
  const sort = o.sort;
  if (sort != null) {
    if (typeof sort === 'string') {
      if (!(PROVIDER_SORTS as readonly string[]).includes(sort)) errs.push(`provider.sort must be one of ${PROVIDER_SORTS.join(', ')}`);
    } else if (typeof sort === 'object' && !Array.isArray(sort)) {
      const s = sort as Record<string, unknown>;
      if (s.by != null && !(PROVIDER_SORTS as readonly unknown[]).includes(s.by)) errs.push(`provider.sort.by must be one of ${PROVIDER_SORTS.join(', ')}`);
      if (s.partition != null && s.partition !== 'model' && s.partition !== 'none') errs.push(`provider.sort.partition must be 'model' or 'none'`);
    } else {
      errs.push('provider.sort must be a string or an object');
    }
  }
  const mp = o.max_price;
  if (mp != null) {
    if (typeof mp !== 'object' || Array.isArray(mp)) errs.push('provider.max_price must be an object');
    else {
      for (const [k, v] of Object.entries(mp as Record<string, unknown>)) {
        if (!['prompt', 'completion', 'request', 'image', 'audio'].includes(k)) {
          errs.push(`provider.max_price.${k} is not a recognized field`);
          continue;
        }
        if (v == null) continue;
        const n = typeof v === 'number' || typeof v === 'string' ? parsePriceLimit(v) : NaN;
        if (n === undefined || Number.isNaN(n)) errs.push(`provider.max_price.${k} must be a non-negative number`);
      }
    }
  }
  for (const k of ['preferred_min_throughput', 'preferred_max_latency']) {
    const v = o[k];
    if (v == null) continue;
    if (typeof v === 'number') {
      if (!Number.isFinite(v) || v < 0) errs.push(`provider.${k} must be a non-negative number`);
    } else if (typeof v === 'object' && !Array.isArray(v)) {
      for (const [pk, pv] of Object.entries(v as Record<string, unknown>)) {
        if (!['p50', 'p75', 'p90', 'p99'].includes(pk)) errs.push(`provider.${k}.${pk} is not a recognized percentile`);
        else if (pv != null && (typeof pv !== 'number' || !Number.isFinite(pv) || pv < 0)) errs.push(`provider.${k}.${pk} must be a non-negative number`);
      }
    } else {
      errs.push(`provider.${k} must be a number or an object of percentiles`);
    }
  }
  return errs;
}
