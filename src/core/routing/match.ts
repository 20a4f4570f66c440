/** Small predicates the routing stages (and organization policy, `/models`) share. */
import type { DataPolicy, EndpointDef, ProviderDef } from '../catalog-types.js';
import type { EndpointHealth } from './types.js';

/** A request parameter is also satisfied by these supported_parameters entries. */
const PARAM_ALIASES: Record<string, readonly string[]> = {
  reasoning: ['reasoning', 'include_reasoning', 'reasoning_effort'],
  reasoning_effort: ['reasoning_effort', 'reasoning'],
  include_reasoning: ['include_reasoning', 'reasoning'],
};

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

export function matchesAny(list: readonly string[], endpoint: EndpointDef, provider?: ProviderDef): boolean {
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
