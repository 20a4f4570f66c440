/**
 * Anthropic errors → the gateway's UpstreamError. Anthropic's envelope is
 * `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_…"}`, both as an HTTP
 * error body and as an in-stream `event: error` (https://docs.anthropic.com/en/api/errors).
 */
import { mapUpstreamStatus, parseRetryAfter, rawBody, UpstreamError } from '../../core/provider-errors.js';
import { isObj } from './wire.js';

/** Anthropic's documented error types and the HTTP status each one goes with. */
const STATUS_OF_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** The HTTP status an Anthropic error type stands for (unknown types: 500). */
export function statusOfErrorType(type: string | undefined): number {
  return (type !== undefined && STATUS_OF_TYPE[type]) || 500;
}

/** "prompt is too long: 208310 tokens > 200000 maximum" and similar context-window messages. */
export function isContextTooLong(message: string): boolean {
  return /prompt is too long|context (window|length)|exceeds? the (maximum )?context|too many (input )?tokens/i.test(message);
}

function details(raw: unknown): { type: string | undefined; message: string } {
  const e = isObj(raw) && isObj(raw.error) ? raw.error : undefined;
  return { type: typeof e?.type === 'string' ? e.type : undefined, message: typeof e?.message === 'string' ? e.message : '' };
}

/**
 * A non-2xx answer as the gateway's error. The HTTP status decides, except that an error type which has its own
 * gateway status (overloaded → 529, rate limit → 429, timeout → 524) wins over a generic 5xx from a proxy in between.
 */
export function anthropicError(status: number, text: string, headers: Record<string, string | string[] | undefined>): UpstreamError {
  const raw = rawBody(text);
  const { type, message } = details(raw);
  let effective = status;
  if (type === 'overloaded_error' || type === 'rate_limit_error' || type === 'timeout_error') effective = statusOfErrorType(type);
  const e = mapUpstreamStatus(effective, message, raw, parseRetryAfter(headers['retry-after']), isContextTooLong(message));
  // Keep the upstream's real status as the provider code.
  return effective === status ? e : new UpstreamError(e.status, e.message, e.type, status, e.raw, e.retryAfter);
}

/** An in-stream `error` event (or a 200 body that is an error envelope) as the gateway's error. */
export function anthropicStreamError(payload: unknown): UpstreamError {
  const { type, message } = details(payload);
  return mapUpstreamStatus(statusOfErrorType(type), message || 'Provider returned error', payload, null, isContextTooLong(message));
}
