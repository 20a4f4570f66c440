/**
 * The errors of a request's attempts, as every API answers them: a plan that has no endpoint (`planHttpError`), and
 * the reply after every attempt failed (`attemptsHttpError`) — the last error, the earlier ones in metadata.
 */
import type { Attempt, RoutePlan } from '../../core/routing.js';
import { HttpError } from '../../core/errors.js';
import type { UpstreamError } from '../../core/provider-errors.js';

/** One attempt as the generation record and gateway_metadata list it. */
export interface AttemptLog {
  provider: string;
  model: string;
  status: number;
  message?: string;
}

/** `headers` with `retry-after` (seconds) added when there is one; `headers` as given (possibly undefined) otherwise. */
function withRetryAfter(headers: Record<string, string> | undefined, seconds: number | null): Record<string, string> | undefined {
  return seconds !== null ? { ...headers, 'retry-after': String(seconds) } : headers;
}

/** The routing error of an empty plan as an HttpError; `headers` are added to the reply. */
export function planHttpError(plan: RoutePlan, headers?: Record<string, string>): HttpError {
  const e = plan.error!;
  const metadata: Record<string, unknown> = { error_type: e.code === 'model_not_found' ? 'not_found' : e.code, excluded_by: e.excluded_by ?? [] };
  // Set by the model-id resolution (services/model-resolution.ts) on model_not_found.
  const named = e as { suggestions?: string[]; ambiguous?: boolean };
  if (named.suggestions) Object.assign(metadata, { suggestions: named.suggestions, ambiguous: named.ambiguous === true });
  const unroutable = plan.considered.filter((c) => c.excluded === 'no_credentials').map((c) => c.provider);
  if (unroutable.length > 0) metadata.providers_without_credentials = [...new Set(unroutable)];
  return new HttpError(e.status, e.message, metadata, withRetryAfter(headers, e.retry_after_ms ? Math.ceil(e.retry_after_ms / 1000) : null));
}

/**
 * The error reply after every attempt failed: the last error, with the provider detail in metadata; `headers` are
 * added to the reply. Retry-After only when every attempt gave one: the smallest of them.
 */
export function attemptsHttpError(last: UpstreamError | null, lastAttempt: { provider: Pick<Attempt['provider'], 'name'>; byok?: unknown } | null, attempts: AttemptLog[], retryHints: number[], headers?: Record<string, string>): HttpError {
  if (!last) return new HttpError(503, 'No endpoint could serve the request', { error_type: 'provider_unavailable' }, headers);
  const metadata: Record<string, unknown> = {
    error_type: last.type,
    provider_name: lastAttempt?.provider.name ?? null,
    raw: last.raw,
    // Whether the attempt that gave this error ran on a BYOK credential.
    is_byok: lastAttempt?.byok !== undefined,
    previous_errors: attempts.slice(0, -1),
  };
  if (last.providerCode !== null) metadata.provider_code = last.providerCode;
  const hint = retryHints.length > 0 && retryHints.length === attempts.length ? Math.min(...retryHints) : null;
  const message = last.status >= 500 && last.type !== 'timeout' ? `Provider returned error: ${last.message}` : last.message;
  return new HttpError(last.status, message, metadata, withRetryAfter(headers, hint));
}
