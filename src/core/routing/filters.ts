/**
 * Stage 3, policy filters. Hard filters are evaluated per endpoint in a fixed order and the FIRST reason that excludes
 * it is recorded (see EXCLUSION_ORDER): availability, organization/guardrail policy, who (account lists, `only`,
 * `ignore`), privacy, capability. Then, per model, the soft parameter filters and `order` without fallbacks, which
 * only look at the endpoints that survived.
 */
import type { EndpointDef, ProviderDef } from '../catalog-types.js';
import { isPriced, pricePerMillion } from '../pricing.js';
import { effectiveDataPolicy, matchesAny, supportsParam } from './match.js';
import type { RoutePrefs } from './preferences.js';
import { SOFT_FILTER_PARAMS, type Candidate, type ExclusionReason, type ModelState, type RouteInput } from './types.js';

/** What the hard filters need from the route input besides the preferences. */
export type FilterContext = Pick<RouteInput, 'hasCredentials' | 'endpointPolicy'>;

/** unknown_provider, no_credentials. */
export function availabilityReason(provider: ProviderDef | undefined, ctx: FilterContext): ExclusionReason | undefined {
  if (!provider) return 'unknown_provider';
  if (!ctx.hasCredentials(provider)) return 'no_credentials';
  return undefined;
}

/** allowed_providers (account allowlist), ignored_providers (account ignore list), only, ignore. */
export function providerListReason(ep: EndpointDef, provider: ProviderDef, prefs: RoutePrefs): ExclusionReason | undefined {
  if (prefs.orgAllowed && !matchesAny(prefs.orgAllowed, ep, provider)) return 'allowed_providers';
  if (prefs.orgIgnored && matchesAny(prefs.orgIgnored, ep, provider)) return 'ignored_providers';
  if (prefs.only && !matchesAny(prefs.only, ep, provider)) return 'only';
  if (prefs.ignore && matchesAny(prefs.ignore, ep, provider)) return 'ignore';
  return undefined;
}

/** data_policy:zdr, data_policy:training, data_policy:retention. */
export function privacyReason(ep: EndpointDef, provider: ProviderDef, prefs: RoutePrefs): ExclusionReason | undefined {
  if (!prefs.requireZdr && !prefs.denyData) return undefined;
  const pol = effectiveDataPolicy(provider, ep);
  if (prefs.requireZdr && !pol.zdr) return 'data_policy:zdr';
  if (prefs.denyData && pol.training) return 'data_policy:training';
  if (prefs.denyData && pol.retainsPrompts) return 'data_policy:retention';
  return undefined;
}

/** The endpoint's price exceeds a `max_price` ceiling; unknown pricing cannot be proven to fit one. */
export function exceedsMaxPrice(ep: EndpointDef, prefs: RoutePrefs): boolean {
  if (!prefs.hasMaxPrice) return false;
  if (!ep.pricing || !isPriced(ep.pricing)) return true;
  const pr = ep.pricing;
  const max = prefs.maxPrice;
  return (
    (max.prompt !== undefined && pricePerMillion(pr.prompt) > max.prompt) ||
    (max.completion !== undefined && pricePerMillion(pr.completion) > max.completion) ||
    (max.request !== undefined && Number(pr.request || 0) > max.request) ||
    (max.image !== undefined && Number(pr.image || 0) > max.image)
  );
}

/**
 * Context: the prompt must fit max_prompt_tokens/context_length, the output must fit max_completion_tokens, and
 * prompt + output must fit context_length.
 */
export function exceedsContext(ep: EndpointDef, promptTok: number | undefined, outTok: number | undefined): boolean {
  const ctx = ep.context_length > 0 ? ep.context_length : Infinity;
  if (promptTok !== undefined) {
    const promptLimit = Math.min(ctx, ep.max_prompt_tokens && ep.max_prompt_tokens > 0 ? ep.max_prompt_tokens : Infinity);
    if (promptTok > promptLimit) return true;
  }
  if (outTok !== undefined) {
    if (ep.max_completion_tokens && ep.max_completion_tokens > 0 && outTok > ep.max_completion_tokens) return true;
    if (promptTok !== undefined && promptTok + outTok > ctx) return true;
  }
  return false;
}

/** quantization, max_price, require_parameters (adding the unsupported ones to `missingParams`), context_length. */
export function capabilityReason(ep: EndpointDef, prefs: RoutePrefs, missingParams: Set<string>): ExclusionReason | undefined {
  if (prefs.quantizations && !prefs.quantizations.includes((ep.quantization ?? 'unknown').toLowerCase())) return 'quantization';
  if (exceedsMaxPrice(ep, prefs)) return 'max_price';
  if (prefs.requireParams) {
    const miss = prefs.checkedParams.filter((p) => !supportsParam(ep, p));
    if (miss.length > 0) {
      for (const m of miss) missingParams.add(m);
      return 'require_parameters';
    }
  }
  if (exceedsContext(ep, prefs.promptTokens, prefs.outputTokens)) return 'context_length';
  return undefined;
}

/** The first hard filter that excludes the endpoint, in EXCLUSION_ORDER, or undefined when it is routable. */
export function hardExclusion(
  ep: EndpointDef,
  provider: ProviderDef | undefined,
  prefs: RoutePrefs,
  ctx: FilterContext,
  missingParams: Set<string>,
): ExclusionReason | undefined {
  const unavailable = availabilityReason(provider, ctx);
  if (unavailable || !provider) return unavailable ?? 'unknown_provider';
  return (
    ctx.endpointPolicy?.(ep, provider) ??
    providerListReason(ep, provider, prefs) ??
    privacyReason(ep, provider, prefs) ??
    capabilityReason(ep, prefs, missingParams)
  );
}

/** Records an exclusion on the candidate's `considered` row and in its model's reasons. */
export function excludeCandidate(st: ModelState, c: Candidate, reason: ExclusionReason): void {
  c.row.excluded = reason;
  st.reasons.push(reason);
}

/**
 * Soft parameter filters (`tools`, `tool_choice`, `response_format`, `verbosity`), only when require_parameters did
 * not already enforce them: if some of the model's candidates support a requested one, the others are dropped
 * (`unsupported_parameter`); if none do, all are kept — so they never empty a model.
 */
export function softParameterFilter(st: ModelState, params: readonly string[], prefs: RoutePrefs): void {
  if (prefs.requireParams) return;
  for (const p of SOFT_FILTER_PARAMS) {
    if (!params.includes(p)) continue;
    const supporters = st.cands.filter((c) => supportsParam(c.endpoint, p));
    if (supporters.length === 0 || supporters.length === st.cands.length) continue;
    for (const c of st.cands) if (!supporters.includes(c)) excludeCandidate(st, c, 'unsupported_parameter');
    st.cands = supporters;
  }
}

/** `order` with allow_fallbacks=false: only the providers named in `order` stay (`allow_fallbacks`). */
export function orderOnlyFilter(st: ModelState, prefs: RoutePrefs): void {
  if (!prefs.order || prefs.allowFallbacks) return;
  for (const c of st.cands) if (c.orderIdx === Infinity) excludeCandidate(st, c, 'allow_fallbacks');
  st.cands = st.cands.filter((c) => c.orderIdx !== Infinity);
}
