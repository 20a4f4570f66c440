/** The plan's errors when no attempt is left: which filter emptied the models, or every endpoint unhealthy. */
import type { RoutePrefs } from './preferences.js';
import {
  AVAILABILITY_REASONS,
  EXCLUSION_ORDER,
  PRIVACY_REASONS,
  type Candidate,
  type ConsideredEndpoint,
  type ExclusionReason,
  type ModelState,
  type RouteError,
  type RouteErrorCode,
} from './types.js';

/** Distinct exclusion reasons, in first-seen order. */
export function distinctReasons(considered: ConsideredEndpoint[]): string[] {
  const out: string[] = [];
  for (const c of considered) if (c.excluded && !out.includes(c.excluded)) out.push(c.excluded);
  return out;
}

type EmptiedCategory = 'no_endpoints' | 'privacy_restricted' | 'constraint_filtered';

export function category(reason: ExclusionReason | null): EmptiedCategory {
  if (reason === null || AVAILABILITY_REASONS.has(reason)) return 'no_endpoints';
  if (PRIVACY_REASONS.has(reason)) return 'privacy_restricted';
  return 'constraint_filtered';
}

/** The filter that removed a model's last endpoints: the latest, in EXCLUSION_ORDER, among its reasons. */
export function emptiedBy(st: ModelState): ExclusionReason | null {
  let best: ExclusionReason | null = null;
  for (const r of st.reasons) if (best === null || EXCLUSION_ORDER.indexOf(r) > EXCLUSION_ORDER.indexOf(best)) best = r;
  return best;
}

function noEndpointsMessage(reason: ExclusionReason | null, names: string, considered: ConsideredEndpoint[], prefs: RoutePrefs, missingParams: Set<string>): string {
  switch (reason) {
    case null:
      return `No endpoints found for ${names}.`;
    case 'unknown_provider':
    case 'no_credentials': {
      const provs = [...new Set(considered.filter((c) => c.excluded === 'no_credentials').map((c) => c.provider))];
      return `No endpoints found for ${names}.` + (provs.length ? ` No credentials are configured for: ${provs.join(', ')}.` : '');
    }
    case 'data_policy:zdr':
      return `No endpoints found for ${names} that match your data policy (zero data retention required)`;
    case 'data_policy:training':
    case 'data_policy:retention':
      return `No endpoints found for ${names} that match your data policy (data collection denied)`;
    case 'require_parameters':
      return `No endpoints found that support the requested parameters: ${[...missingParams].join(', ')}`;
    case 'max_price':
      return `No endpoints found for ${names} within the requested max_price`;
    case 'context_length': {
      const { promptTokens: p, outputTokens: o } = prefs;
      return `No endpoints found for ${names} that can fit the request` + (p !== undefined ? ` (${p} prompt tokens` + (o !== undefined ? ` + ${o} output tokens)` : ')') : '');
    }
    case 'quantization':
      return `No endpoints found for ${names} with the requested quantizations: ${(prefs.quantizations ?? []).join(', ')}`;
    case 'allow_fallbacks':
      return prefs.order
        ? `No endpoints found for ${names} among provider.order (${prefs.order.join(', ')}) and allow_fallbacks is false`
        : `No endpoints found for ${names} (allow_fallbacks is false)`;
    default:
      return `No endpoints found for ${names} that match your provider preferences (${reason})`;
  }
}

/**
 * Error when no attempt is left. Each model's emptying filter is classified as no_endpoints (no endpoints / no
 * credentials), privacy_restricted (zdr / data collection) or constraint_filtered (everything else). Across models
 * the code is privacy_restricted if any model was emptied by privacy, else constraint_filtered if any was emptied by
 * a constraint, else no_endpoints.
 */
export function noEndpointsError(states: ModelState[], considered: ConsideredEndpoint[], prefs: RoutePrefs, missingParams: Set<string>): RouteError {
  const reasons = states.map(emptiedBy);
  const cats = reasons.map(category);
  const code: RouteErrorCode = cats.includes('privacy_restricted')
    ? 'privacy_restricted'
    : cats.includes('constraint_filtered')
      ? 'constraint_filtered'
      : 'no_endpoints';
  const reason = reasons[cats.indexOf(code)] ?? null;
  const names = states.map((s) => s.model).join(', ');
  const message = noEndpointsMessage(reason, names, considered, prefs, missingParams);
  return { status: 404, code, message, excluded_by: distinctReasons(considered) };
}

/**
 * All remaining endpoints failed recently: 503 rather than hammering them, with the time until the first one leaves
 * the unhealthy window. (If at least one is healthy, unhealthy ones are simply tried last.)
 */
export function allUnhealthyError(list: Candidate[], states: ModelState[], considered: ConsideredEndpoint[], now: number, windowMs: number): RouteError {
  const retry = Math.max(0, Math.min(...list.map((c) => (c.health?.lastFailureAt ?? now) + windowMs - now)));
  return {
    status: 503,
    code: 'all_unhealthy',
    message: `All endpoints for ${states.map((s) => s.model).join(', ')} failed in the last ${Math.round(windowMs / 1000)}s; try again shortly`,
    excluded_by: distinctReasons(considered),
    retry_after_ms: retry,
  };
}
