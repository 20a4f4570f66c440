/**
 * Helpers shared by the inbound adapters of the Responses and Messages skins: reading loosely typed (already
 * schema-validated, but open-ended) request values, cache-control marks, the canonical `error_type` of a status,
 * SSE framing and deterministic output-item ids.
 */
import type { CacheControl, IrUsage } from '../core/ir.js';
import { HttpError } from '../core/errors.js';

export type Json = Record<string, unknown>;

/** A 400 with the canonical `error_type`, thrown when a client body cannot be expressed in the IR. */
export function invalid(message: string): HttpError {
  return new HttpError(400, message, { error_type: 'invalid_request' });
}

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Calls `fn` with each item of an optional array field and its path (`tools[2]`); false when the field is absent or
 * null. A field that is not an array, or an item that is not an object, is a 400 naming it.
 */
export function forEachObject(v: unknown, field: string, fn: (item: Json, where: string) => void): boolean {
  if (v === undefined || v === null) return false;
  if (!Array.isArray(v)) throw invalid(`${field} must be an array`);
  v.forEach((item, i) => {
    const where = `${field}[${i}]`;
    if (!isObject(item)) throw invalid(`${where} must be an object`);
    fn(item, where);
  });
  return true;
}
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
export const bool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);

/** Copies a `cache_control` mark (`{type:'ephemeral', ttl?}`); anything else is refused. */
export function cacheControl(v: unknown, where: string): CacheControl | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v) || v.type !== 'ephemeral') throw invalid(`${where}.cache_control must be {"type":"ephemeral"}`);
  const out: CacheControl = { type: 'ephemeral' };
  if (v.ttl !== undefined && v.ttl !== null) {
    if (v.ttl !== '5m' && v.ttl !== '1h') throw invalid(`${where}.cache_control.ttl must be one of: 5m, 1h`);
    out.ttl = v.ttl;
  }
  return out;
}

/** Adds `cache_control` to an object only when set (keeps IR objects free of `undefined` keys). */
export function withCache<T extends object>(o: T, cc: CacheControl | undefined): T {
  if (cc) (o as { cache_control?: CacheControl }).cache_control = cc;
  return o;
}


/** An image URL as an IR image: `data:<type>;base64,<data>` is split into data + media type (as on /chat/completions). */
export function imageFromUrl(url: string): { type: 'image'; url?: string; data?: string; media_type?: string } {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return m ? { type: 'image', data: m[2], media_type: m[1] } : { type: 'image', url };
}

/** Parses a tool-call argument text into the object Anthropic-style APIs expect; `{}` when it is not an object. */
export function parseArguments(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  try {
    const v = JSON.parse(text) as unknown;
    return isObject(v) ? v : {};
  } catch {
    return {};
  }
}

/** The canonical gateway `error_type` for a status, used when the caller did not give one. */
export function defaultErrorType(status: number): string {
  switch (status) {
    case 400:
      return 'invalid_request';
    case 401:
      return 'authentication';
    case 402:
      return 'payment_required';
    case 403:
      return 'permission_denied';
    case 404:
      return 'not_found';
    case 408:
    case 524:
      return 'timeout';
    case 413:
      return 'payload_too_large';
    case 422:
      return 'unprocessable';
    case 429:
      return 'rate_limit_exceeded';
    case 502:
    case 503:
      return 'provider_unavailable';
    case 529:
      return 'provider_overloaded';
    default:
      return status >= 500 ? 'server' : 'invalid_request';
  }
}

/** One SSE frame with an `event:` line (both the Responses and the Messages skins name their events). */
export const sse = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** The suffix of a `gen-…` id, used to derive stable output-item ids (`msg_<suffix>_<n>`). */
export const idSuffix = (genId: string): string => genId.replace(/^gen-/, '');

/** Input tokens that were neither read from nor written to the prompt cache (Anthropic's `input_tokens`). */
export const uncachedInput = (u: IrUsage): number => Math.max(0, u.input - u.cache_read - u.cache_write);
