/**
 * `gateway_metadata` of the non-chat inference APIs that answer one JSON body (embeddings, transcriptions): the
 * routing plan, the attempts and the endpoint that served, in the shape chat uses (docs/chat.md, "Routing metadata").
 */
import type { Attempt, RoutePlan } from '../core/routing.js';
import type { AttemptLog } from './attempts/errors.js';

export function routeMetadata(plan: RoutePlan, requested: string, attempts: AttemptLog[], dropped: string[], selected: Attempt | null): Record<string, unknown> {
  return {
    attempt: attempts.length,
    requested,
    strategy: plan.strategy,
    summary: selected ? `${selected.model} via ${selected.provider.slug}` : 'no endpoint served the request',
    region: 'self-hosted',
    is_byok: selected?.byok !== undefined,
    endpoints: {
      total: plan.considered.filter((c) => c.provider).length,
      available: plan.considered
        .filter((c) => !c.excluded && c.provider)
        .map((c) => ({ model: c.model, provider: c.provider, selected: selected !== null && c.model === selected.model && c.provider === selected.provider.slug })),
    },
    attempts,
    excluded: plan.considered.filter((c) => c.excluded).map((c) => ({ model: c.model, provider: c.provider, reason: c.excluded })),
    ...(dropped.length > 0 ? { dropped_parameters: dropped } : {}),
  };
}
