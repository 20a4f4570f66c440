/**
 * Upstream failures, normalized to the gateway's documented statuses: 400 (bad request for the model),
 * 429 (rate limited, with Retry-After when given), 502 (provider error or invalid response), 524 (timeout),
 * 529 (overloaded).
 */

export type UpstreamErrorType =
  | 'invalid_request'
  | 'context_length_exceeded'
  | 'rate_limit_exceeded'
  | 'provider_unavailable'
  | 'provider_overloaded'
  | 'timeout'
  | 'authentication'
  | 'server'
  | 'cancelled';

export class UpstreamError extends Error {
  constructor(
    /** Status the gateway answers with. */
    readonly status: number,
    message: string,
    readonly type: UpstreamErrorType,
    /** The upstream's own status code, when it answered. */
    readonly providerCode: number | null,
    /** The upstream's raw error body (truncated). */
    readonly raw: unknown,
    /** Seconds, from the upstream's Retry-After. */
    readonly retryAfter: number | null = null,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

const RAW_LIMIT = 4096;

export function rawBody(text: string): unknown {
  const t = text.length > RAW_LIMIT ? text.slice(0, RAW_LIMIT) : text;
  try {
    return JSON.parse(t);
  } catch {
    return t;
  }
}

export function parseRetryAfter(v: string | string[] | undefined): number | null {
  const s = Array.isArray(v) ? v[0] : v;
  if (!s) return null;
  const n = Number(s);
  if (Number.isFinite(n) && n >= 0) return Math.ceil(n);
  const d = Date.parse(s);
  return Number.isNaN(d) ? null : Math.max(0, Math.ceil((d - Date.now()) / 1000));
}

/** Maps an upstream HTTP error status to the gateway's status and error type. */
export function mapUpstreamStatus(status: number, message: string, raw: unknown, retryAfter: number | null, contextTooLong = false): UpstreamError {
  if (status === 429) return new UpstreamError(429, message || 'Provider rate limit exceeded', 'rate_limit_exceeded', status, raw, retryAfter);
  if (status === 529) return new UpstreamError(529, message || 'Provider is overloaded', 'provider_overloaded', status, raw, retryAfter);
  if (status === 408 || status === 504 || status === 524) return new UpstreamError(524, message || 'Provider timed out', 'timeout', status, raw);
  if (status === 400 || status === 413 || status === 422) {
    return new UpstreamError(400, message || 'Provider rejected the request', contextTooLong ? 'context_length_exceeded' : 'invalid_request', status, raw);
  }
  if (status === 401 || status === 403) {
    return new UpstreamError(502, 'Provider rejected the gateway credentials', 'authentication', status, raw);
  }
  return new UpstreamError(502, message || 'Provider returned error', 'provider_unavailable', status, raw, retryAfter);
}
