/**
 * Stage 4, sort: within a model (or across models with partition `none`), candidates form three tiers — healthy
 * and meeting the soft preferences, healthy but missing them, unhealthy — each ordered by the strategy. The default
 * strategy load-balances the first attempt over the cheap tier; `order` and `sort` make the order deterministic.
 */
import type { ProviderSortBy } from '../provider-prefs.js';
import type { RoutePrefs } from './preferences.js';
import { CHEAP_TIER_FACTOR, type Candidate } from './types.js';

export type CandidateCompare = (a: Candidate, b: Candidate) => number;

/** How a plan orders its candidates: the comparator, and whether the first attempt is drawn at random. */
export interface Sorter {
  cmp: CandidateCompare;
  loadBalance: boolean;
  rng: () => number;
}

export interface Tiers {
  pref: Candidate[];
  miss: Candidate[];
  bad: Candidate[];
}

/** The sort key of a candidate (lower first; null = unknown, sorted last). Without a sort: the price. */
export function sortKey(c: Candidate, sortBy: Exclude<ProviderSortBy, 'exacto'> | null): number | null {
  switch (sortBy) {
    case 'throughput': {
      const v = c.health?.throughput?.p50;
      return typeof v === 'number' ? -v : null; // descending
    }
    case 'latency': {
      const v = c.health?.latencyMs?.p50;
      return typeof v === 'number' ? v : null;
    }
    default:
      return c.price; // 'price', and the default strategy: fallbacks ordered by price
  }
}

function nullsLast(a: number | null, b: number | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a - b;
}

/** By `order` position (Infinity - Infinity is NaN, so compared explicitly). */
export function compareOrder(a: Candidate, b: Candidate): number {
  if (a.orderIdx === b.orderIdx) return 0;
  return a.orderIdx < b.orderIdx ? -1 : 1;
}

/**
 * Deterministic comparator: `order` position, then the sort key (unknown last), then price, then model order, then
 * catalog order.
 */
export function compareCandidates(sortBy: Exclude<ProviderSortBy, 'exacto'> | null): CandidateCompare {
  return (a, b) =>
    compareOrder(a, b) ||
    nullsLast(sortKey(a, sortBy), sortKey(b, sortBy)) ||
    nullsLast(a.price, b.price) ||
    a.modelIdx - b.modelIdx ||
    a.catIdx - b.catIdx;
}

/** The plan's sorter. Load balancing happens only with no `order` and no sort (both disable it). */
export function makeSorter(prefs: RoutePrefs, rng: () => number): Sorter {
  return { cmp: compareCandidates(prefs.sortBy), loadBalance: !prefs.order && !prefs.sortBy, rng };
}

/** Weighted draw: index i with probability weights[i] / sum, from `r` in [0, 1). */
export function weightedPick(weights: readonly number[], r: number): number {
  const total = weights.reduce((s, w) => s + w, 0);
  let left = Math.min(Math.max(r, 0), 1 - Number.EPSILON) * total;
  for (let i = 0; i < weights.length; i++) {
    left -= weights[i];
    if (left < 0) return i;
  }
  return weights.length - 1;
}

/**
 * Orders one tier. Default strategy (load balancing): the first endpoint is drawn at
 * random with weight 1/price² among the cheap tier (priced endpoints costing at most
 * CHEAP_TIER_FACTOR × the cheapest; if the cheapest is free, the free ones with equal
 * weights); the rest follow by price ascending, unknown prices last.
 */
export function orderTier(tier: Candidate[], sorter: Sorter): Candidate[] {
  if (tier.length < 2) return tier;
  const sorted = [...tier].sort(sorter.cmp);
  if (!sorter.loadBalance) return sorted;
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
  const pick = cheap[weightedPick(weights, sorter.rng())];
  return [pick, ...sorted.filter((c) => c !== pick)];
}

/**
 * Unhealthy endpoints (tried last): `order` position first, then fewest consecutive
 * failures, then the oldest failure (most likely recovered), then the usual order.
 */
export function orderUnhealthy(tier: Candidate[], sorter: Sorter): Candidate[] {
  if (tier.length < 2) return tier;
  return [...tier].sort(
    (a, b) =>
      compareOrder(a, b) ||
      (a.health?.consecutiveFailures ?? 1) - (b.health?.consecutiveFailures ?? 1) ||
      (a.health?.lastFailureAt ?? 0) - (b.health?.lastFailureAt ?? 0) ||
      sorter.cmp(a, b),
  );
}

const NONE: Candidate[] = [];

/** Healthy meeting the soft preferences, healthy missing them, unhealthy. */
export function splitTiers(cands: Candidate[]): Tiers {
  if (cands.every((c) => !c.unhealthy && !c.missesPrefs)) return { pref: cands, miss: NONE, bad: NONE };
  return {
    pref: cands.filter((c) => !c.unhealthy && !c.missesPrefs),
    miss: cands.filter((c) => !c.unhealthy && c.missesPrefs),
    bad: cands.filter((c) => c.unhealthy),
  };
}

/** The three tiers, each ordered, concatenated (a fresh array the caller may change). */
export function orderTiers(t: Tiers, sorter: Sorter): Candidate[] {
  if (t.miss.length === 0 && t.bad.length === 0) return [...orderTier(t.pref, sorter)];
  return [...orderTier(t.pref, sorter), ...orderTier(t.miss, sorter), ...orderUnhealthy(t.bad, sorter)];
}
