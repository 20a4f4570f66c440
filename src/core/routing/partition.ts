/**
 * Stage 5, partition: the ordered candidates grouped into one block per model (fallback models stay fallbacks,
 * unless soft preferences promote one) or a single block across models (sort partition `none`); then session
 * affinity, `allow_fallbacks: false` without `order`, and the strategy label.
 */
import { excludeCandidate } from './filters.js';
import type { RoutePrefs } from './preferences.js';
import { orderTiers, splitTiers, type Sorter } from './sort.js';
import type { Candidate, ModelState, RouteInput } from './types.js';

/**
 * One ordered block per model with candidates, in request order — except that with soft preferences, models with no
 * healthy endpoint meeting them move after the models that have one (stable otherwise). Partition `none`: all
 * endpoints of all models sorted together in one block.
 */
export function partitionBlocks(states: ModelState[], prefs: RoutePrefs, sorter: Sorter): Candidate[][] {
  if (prefs.partition === 'none') return [orderTiers(splitTiers(states.flatMap((s) => s.cands)), sorter)];
  const withPref: Candidate[][] = [];
  const withoutPref: Candidate[][] = [];
  for (const st of states) {
    if (st.cands.length === 0) continue;
    const t = splitTiers(st.cands);
    const block = orderTiers(t, sorter);
    if (prefs.hasSoftPrefs && t.pref.length === 0) withoutPref.push(block);
    else withPref.push(block);
  }
  return [...withPref, ...withoutPref];
}

/**
 * Sticky endpoint (session affinity): moved to the front of its model's block (the front of everything with
 * partition `none` or when that model comes first), if it survived filtering and is healthy. Returns it, if moved.
 */
export function promoteSticky(blocks: Candidate[][], sticky: RouteInput['stickyEndpoint']): Candidate | undefined {
  if (!sticky) return undefined;
  for (const block of blocks) {
    const i = block.findIndex((c) => c.model === sticky.model && c.endpoint.tag === sticky.tag && !c.unhealthy);
    if (i >= 0) {
      const cand = block[i];
      block.splice(i, 1);
      block.unshift(cand);
      return cand;
    }
  }
  return undefined;
}

/**
 * allow_fallbacks=false without `order`: only the first (chosen) endpoint of each model stays; the others are
 * recorded as excluded by `allow_fallbacks`.
 */
export function onePerModel(list: Candidate[], states: ModelState[], prefs: RoutePrefs): Candidate[] {
  if (prefs.allowFallbacks || prefs.order) return list;
  const seen = new Set<string>();
  const kept: Candidate[] = [];
  for (const c of list) {
    if (seen.has(c.model)) {
      excludeCandidate(states[c.modelIdx], c, 'allow_fallbacks');
      delete c.row.unhealthy;
      continue;
    }
    seen.add(c.model);
    kept.push(c);
  }
  return kept;
}

/** 'sticky' | 'order' | 'sort:<by>' | 'fallback' (the first attempt is not the first model) | 'direct'. */
export function strategyLabel(list: Candidate[], sticky: Candidate | undefined, prefs: RoutePrefs, firstModel: string): string {
  if (sticky && list[0] === sticky) return 'sticky';
  if (prefs.order) return 'order';
  if (prefs.sortBy) return `sort:${prefs.sortBy}`;
  if (list[0].model !== firstModel) return 'fallback';
  return 'direct';
}
