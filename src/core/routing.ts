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
 *  8. BYOK: each planned endpoint on the request's own credentials — prioritized ones first, the shared key, then
 *     fallback ones (`input.byok`); a provider is available when it has a shared key or a credential.
 * Models are concatenated in request order (fallback models stay fallbacks) unless the
 * sort partition is `none` or soft preferences promote a fallback model.
 *
 * The stages live in core/routing/, each a pure function testable alone:
 *   preferences.ts  resolvePreferences (RoutePrefs), missesPreferences, orderIndex
 *   candidates.ts   requestedModels (step 1), modelCandidates (endpoints through the hard filters)
 *   filters.ts      hardExclusion and its groups (step 2), softParameterFilter (3), orderOnlyFilter (4)
 *   sort.ts         splitTiers, orderTier, orderUnhealthy, orderTiers (step 5)
 *   partition.ts    partitionBlocks, promoteSticky (6), onePerModel (7), strategyLabel
 *   byok.ts         withByok (8)
 *   errors.ts       noEndpointsError, allUnhealthyError
 */
import { withByok } from './routing/byok.js';
import { modelCandidates, requestedModels } from './routing/candidates.js';
import { allUnhealthyError, noEndpointsError } from './routing/errors.js';
import { orderOnlyFilter, softParameterFilter } from './routing/filters.js';
import { onePerModel, partitionBlocks, promoteSticky, strategyLabel } from './routing/partition.js';
import { resolvePreferences } from './routing/preferences.js';
import { makeSorter } from './routing/sort.js';
import type { ConsideredEndpoint, RouteError, RouteInput, RoutePlan } from './routing/types.js';

export type {
  Attempt,
  ByokRef,
  ByokRouting,
  ConsideredEndpoint,
  EndpointHealth,
  ExclusionReason,
  PercentileStats,
  RouteCatalog,
  RouteError,
  RouteErrorCode,
  RouteInput,
  RoutePlan,
} from './routing/types.js';
export { CHEAP_TIER_FACTOR, DEFAULT_UNHEALTHY_WINDOW_MS, SOFT_FILTER_PARAMS, UNIVERSAL_PARAMS } from './routing/types.js';
export { effectiveDataPolicy, isUnhealthy, matchesProvider, supportsParam } from './routing/match.js';

function failed(error: RouteError, considered: ConsideredEndpoint[]): RoutePlan {
  return { attempts: [], strategy: 'none', considered, error };
}

export function planRoute(routeInput: RouteInput): RoutePlan {
  const byok = routeInput.byok;
  const shared = routeInput.hasCredentials;
  const input: RouteInput = byok ? { ...routeInput, hasCredentials: (p) => shared(p) || byok.has(p) } : routeInput;
  const considered: ConsideredEndpoint[] = [];
  const prefs = resolvePreferences(input);
  if ('code' in prefs) return failed(prefs, considered);
  const models = requestedModels(input.models, input.catalog, considered);
  if ('code' in models) return failed(models, considered);
  const { requested, states } = models;

  const missingParams = new Set<string>();
  for (const st of states) {
    modelCandidates(st, input, prefs, considered, missingParams);
    softParameterFilter(st, input.params, prefs);
    orderOnlyFilter(st, prefs);
    for (const c of st.cands) if (c.unhealthy) c.row.unhealthy = true;
  }

  const blocks = partitionBlocks(states, prefs, makeSorter(prefs, input.rng));
  const sticky = promoteSticky(blocks, input.stickyEndpoint);
  const list = onePerModel(blocks.flat(), states, prefs);

  if (list.length === 0) return failed(noEndpointsError(states, considered, prefs, missingParams), considered);
  if (list.every((c) => c.unhealthy)) return failed(allUnhealthyError(list, states, considered, input.now, prefs.windowMs), considered);
  const attempts = withByok(list.map((c) => ({ model: c.model, endpoint: c.endpoint, provider: c.provider })), byok, shared);
  // The only credentials of a provider exclude this model (`allowed_models`): nothing left to try.
  if (attempts.length === 0) return failed(noEndpointsError(states, considered, prefs, missingParams), considered);
  return {
    attempts,
    strategy: strategyLabel(list, sticky, prefs, requested[0]),
    considered,
  };
}
