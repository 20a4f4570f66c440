/**
 * Stage 2, candidates: the requested models that exist (unknown ids recorded as `model_not_found`), and for each one
 * its catalog endpoints, each recorded in `considered` and either excluded by the first hard filter that refuses it
 * or kept as a candidate carrying its price, health and preference marks.
 */
import { blendedTokenPrice } from '../pricing.js';
import { hardExclusion } from './filters.js';
import { isUnhealthy } from './match.js';
import { missesPreferences, orderIndex, type RoutePrefs } from './preferences.js';
import type { ConsideredEndpoint, ModelState, RouteCatalog, RouteError, RouteInput } from './types.js';

export interface RequestedModels {
  /** Distinct requested ids, in request order (unknown ones included). */
  requested: string[];
  /** The ones that exist in the catalog. */
  states: ModelState[];
}

/**
 * The distinct requested models; unknown ids get a `model_not_found` row in `considered`. A 400 when none is given,
 * a 404 when none exists.
 */
export function requestedModels(models: readonly string[], catalog: RouteCatalog, considered: ConsideredEndpoint[]): RequestedModels | RouteError {
  const requested = [...new Set(models)];
  if (requested.length === 0) return { status: 400, code: 'invalid_request', message: 'No model specified' };
  const missing: string[] = [];
  const states: ModelState[] = [];
  for (const model of requested) {
    if (!catalog.models.has(model)) {
      considered.push({ model, provider: '', tag: '', excluded: 'model_not_found' });
      missing.push(model);
      continue;
    }
    states.push({ model, idx: states.length, cands: [], reasons: [] });
  }
  if (states.length === 0) {
    const message =
      missing.length === 1 ? `${missing[0]} is not a valid model ID` : `None of the requested models exist: ${missing.join(', ')}`;
    return { status: 404, code: 'model_not_found', message, excluded_by: ['model_not_found'] };
  }
  return { requested, states };
}

/**
 * Fills `st.cands` with the model's endpoints that pass the hard filters; every endpoint gets a row in `considered`
 * (with its exclusion reason when refused). Parameters refused by require_parameters are added to `missingParams`.
 */
export function modelCandidates(
  st: ModelState,
  input: RouteInput,
  prefs: RoutePrefs,
  considered: ConsideredEndpoint[],
  missingParams: Set<string>,
): void {
  const eps = input.catalog.endpointsByModel.get(st.model) ?? [];
  eps.forEach((ep, catIdx) => {
    const provider = input.catalog.providers.get(ep.provider);
    const row: ConsideredEndpoint = { model: st.model, provider: ep.provider, tag: ep.tag };
    considered.push(row);
    const reason = hardExclusion(ep, provider, prefs, input, missingParams);
    if (reason || !provider) {
      row.excluded = reason ?? 'unknown_provider';
      st.reasons.push(row.excluded);
      return;
    }
    const health = input.health(ep);
    st.cands.push({
      model: st.model,
      modelIdx: st.idx,
      catIdx,
      endpoint: ep,
      provider,
      row,
      price: blendedTokenPrice(ep.pricing),
      health,
      unhealthy: isUnhealthy(health, input.now, prefs.windowMs),
      missesPrefs: missesPreferences(health, prefs),
      orderIdx: orderIndex(prefs.order, ep, provider),
    });
  });
}
