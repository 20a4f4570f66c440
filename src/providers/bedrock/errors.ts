/**
 * Bedrock runtime errors (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_Errors):
 * the HTTP status, the `x-amzn-errortype` header (`ValidationException:http://…`) and a `{"message": …}` body. In a
 * ConverseStream, the same kinds arrive as `exception` messages (`:exception-type` header).
 */
import { mapUpstreamStatus, parseRetryAfter, rawBody, type UpstreamError } from '../../core/provider-errors.js';

/** An exception type of the stream → the HTTP status Bedrock gives it outside a stream. */
const EXCEPTION_STATUS: Record<string, number> = {
  validationException: 400,
  accessDeniedException: 403,
  resourceNotFoundException: 404,
  modelTimeoutException: 408,
  throttlingException: 429,
  serviceQuotaExceededException: 429,
  modelErrorException: 424,
  modelNotReadyException: 429,
  internalServerException: 500,
  modelStreamErrorException: 500,
  serviceUnavailableException: 503,
};

function messageOf(raw: unknown): string {
  if (typeof raw !== 'object' || raw === null) return '';
  const r = raw as { message?: unknown; Message?: unknown };
  return typeof r.message === 'string' ? r.message : typeof r.Message === 'string' ? r.Message : '';
}

const TOO_LONG = /too long|input is too long|context (window|length)|exceeds? the (maximum|max) (number of )?(input )?tokens/i;

export function bedrockError(status: number, text: string, headers: Record<string, string | string[] | undefined>): UpstreamError {
  const raw = rawBody(text);
  const message = messageOf(raw);
  const kind = String(headers['x-amzn-errortype'] ?? '').split(':')[0];
  // A model that is not ready yet is retried later, like a rate limit.
  const s = kind === 'ModelNotReadyException' ? 429 : status;
  return mapUpstreamStatus(s, message, raw, parseRetryAfter(headers['retry-after']), s === 400 && TOO_LONG.test(message));
}

/** An exception message of a ConverseStream, mapped as the same error outside a stream would be. */
export function bedrockStreamException(type: string, payload: unknown): UpstreamError {
  const key = type.charAt(0).toLowerCase() + type.slice(1);
  const status = EXCEPTION_STATUS[key] ?? 500;
  const message = messageOf(payload) || `Provider stream error (${type})`;
  return mapUpstreamStatus(status, message, payload, null, status === 400 && TOO_LONG.test(message));
}
