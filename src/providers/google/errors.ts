/**
 * Google API errors → gateway errors. The envelope is `{"error": {"code", "message", "status", "details"}}` (a JSON
 * array of such objects from non-SSE stream endpoints is accepted too); `status` is the google.rpc.Code name.
 *
 * Mapping (decisions):
 * - 429 / RESOURCE_EXHAUSTED → 429; retry-after from the `Retry-After` header, else from the
 *   `google.rpc.RetryInfo.retryDelay` detail (`"37s"`, `"1.5s"`, rounded up).
 * - 400 INVALID_ARGUMENT → 400 (`context_length_exceeded` when the message says the input exceeds the token limit);
 *   except an invalid API key (ErrorInfo reason `API_KEY_INVALID`, sent as 400) → 502 `authentication`, since it is the
 *   gateway's credential, not the caller's request, that is wrong.
 * - 400 FAILED_PRECONDITION (free tier not available in the region, billing) → 502: an account problem on the
 *   gateway's side that another provider may not have.
 * - 401/403 → 502 `authentication`; 404 and 5xx → 502; 500 INTERNAL → 502.
 * - 503 UNAVAILABLE whose message says "overloaded" (Gemini's "The model is overloaded. Please try again later.") →
 *   529 `provider_overloaded`; any other 503 → 502.
 * - 504 / DEADLINE_EXCEEDED → 524.
 */
import type { IrStreamEvent } from '../../core/ir.js';
import { mapUpstreamStatus, parseRetryAfter, rawBody, UpstreamError } from '../../core/provider-errors.js';
import { isObj, type GoogleErrorBody } from './types.js';

/** The `error` object of a Google error body (`{error}` or `[{error}]`), if any. */
export function googleErrorBody(raw: unknown): GoogleErrorBody | undefined {
  const top = Array.isArray(raw) ? raw[0] : raw;
  if (!isObj(top) || !isObj(top.error)) return undefined;
  return top.error as GoogleErrorBody;
}

/** Seconds of a `google.rpc.RetryInfo` detail (`retryDelay` is a protobuf Duration: `"37s"`, `"0.5s"`). */
export function retryDelaySeconds(err: GoogleErrorBody | undefined): number | null {
  if (!err || !Array.isArray(err.details)) return null;
  for (const d of err.details) {
    if (!isObj(d) || typeof d['@type'] !== 'string' || !d['@type'].endsWith('google.rpc.RetryInfo')) continue;
    const delay = d.retryDelay;
    if (typeof delay === 'string') {
      const m = /^(\d+(?:\.\d+)?)s$/.exec(delay.trim());
      if (m) return Math.ceil(Number(m[1]));
    } else if (isObj(delay)) {
      // The proto form {seconds, nanos}, in case a proxy re-encodes it.
      const s = Number(delay.seconds ?? 0) + Number(delay.nanos ?? 0) / 1e9;
      if (Number.isFinite(s)) return Math.ceil(s);
    }
  }
  return null;
}

function errorReason(err: GoogleErrorBody | undefined): string | undefined {
  if (!err || !Array.isArray(err.details)) return undefined;
  for (const d of err.details) {
    if (isObj(d) && typeof d.reason === 'string') return d.reason;
  }
  return undefined;
}

const CONTEXT_TOO_LONG = /exceeds the maximum number of tokens|input token count.*exceeds|context (window|length)/i;

/** Maps an HTTP status plus (optional) Google error object to the gateway's error. */
export function mapGoogleError(httpStatus: number, err: GoogleErrorBody | undefined, raw: unknown, retryAfterHeader: number | null): UpstreamError {
  const message = typeof err?.message === 'string' ? err.message : '';
  const status = typeof err?.status === 'string' ? err.status : '';
  const retryAfter = retryAfterHeader ?? retryDelaySeconds(err);
  const reason = errorReason(err);
  if (reason === 'API_KEY_INVALID' || /API key not valid/i.test(message)) {
    return new UpstreamError(502, 'Provider rejected the gateway credentials', 'authentication', httpStatus, raw);
  }
  let mapped: UpstreamError;
  if (status === 'RESOURCE_EXHAUSTED' || httpStatus === 429) mapped = mapUpstreamStatus(429, message, raw, retryAfter);
  else if (status === 'DEADLINE_EXCEEDED' || httpStatus === 504) mapped = mapUpstreamStatus(504, message, raw, null);
  else if ((httpStatus === 503 || status === 'UNAVAILABLE') && /overload/i.test(message)) mapped = mapUpstreamStatus(529, message, raw, retryAfter);
  else if (status === 'FAILED_PRECONDITION') {
    mapped = new UpstreamError(502, message || 'Provider precondition failed', 'provider_unavailable', httpStatus, raw, retryAfter);
  } else mapped = mapUpstreamStatus(httpStatus, message, raw, retryAfter, CONTEXT_TOO_LONG.test(message));
  // mapUpstreamStatus records the status it was given; report the upstream's real one.
  return mapped.providerCode === httpStatus ? mapped : new UpstreamError(mapped.status, mapped.message, mapped.type, httpStatus, raw, mapped.retryAfter);
}

/** A non-2xx answer as the gateway's error. */
export function parseGoogleError(status: number, text: string, headers: Record<string, string | string[] | undefined>): UpstreamError {
  const raw = rawBody(text);
  return mapGoogleError(status, googleErrorBody(raw), raw, parseRetryAfter(headers['retry-after']));
}

/** An `{"error": {...}}` event inside a stream as an IR error event. */
export function streamErrorEvent(payload: { error?: GoogleErrorBody }): Extract<IrStreamEvent, { type: 'error' }> {
  const err = payload.error ?? {};
  const e = mapGoogleError(typeof err.code === 'number' ? err.code : 500, err, payload, null);
  return { type: 'error', status: e.status, message: e.message, error_type: e.type, raw: payload };
}
