/**
 * The one rule deciding which upstream failures count against an endpoint's health (docs/architecture.md). Every API's
 * attempts go through it (services/attempts/runner.ts), so that a request's own fault never takes an endpoint out of
 * routing for other callers.
 *
 * - Never counted — the request's fault, or no verdict on the endpoint: the client went away (`cancelled`); the
 *   upstream refused the request (`invalid_request`, `context_length_exceeded`); any other upstream 4xx than 401, 403,
 *   408 and 429 (a 404, 409, 415 … answers this request, not the endpoint's state).
 * - Counted — the endpoint's fault or state: refused credentials (401/403, `authentication`), rate limits (429) and
 *   overload (529), 5xx, timeouts (408/504/524 and the gateway's own), malformed or invalid replies, refused or reset
 *   connections.
 */
import type { UpstreamErrorType } from './provider-errors.js';

/** What the rule reads of a failure (an UpstreamError satisfies it). */
export interface FailureFacts {
  type: UpstreamErrorType;
  /** The upstream's own HTTP status when it answered one (null: no answer, e.g. a refused connection or a timeout). */
  providerCode: number | null;
}

/** Upstream 4xx statuses that are about the endpoint (credentials, rate limits, timeouts), not the request. */
const ENDPOINT_4XX = new Set([401, 403, 408, 429]);

/** Whether a failed attempt counts against its endpoint's health. */
export function countsAgainstHealth(f: FailureFacts): boolean {
  if (f.type === 'cancelled' || f.type === 'invalid_request' || f.type === 'context_length_exceeded') return false;
  const code = f.providerCode;
  if (code !== null && code >= 400 && code < 500 && !ENDPOINT_4XX.has(code)) return false;
  return true;
}
